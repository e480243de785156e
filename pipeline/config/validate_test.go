package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestResolvedDefaults(t *testing.T) {
	c := Config{Strategy: Hold, PartitionWorkers: 5}.Resolved()
	if c.SynthesisWorkers != 5 {
		t.Errorf("hold: synthesis workers %d, want pw", c.SynthesisWorkers)
	}
	if c.Pacer != (PacerConfig{}) {
		t.Errorf("hold got pacer defaults %+v", c.Pacer)
	}
	p := Config{Strategy: Pacer, SynthesisWorkers: 3, Pacer: PacerConfig{TargetDepth: 2.5}}.Resolved()
	want := PacerConfig{TargetDepth: 2.5, Kp: DefaultKp, Ki: DefaultKi, Interval: DefaultPacerInterval, MaxInFlight: 3 + 6}
	if p.Pacer != want {
		t.Errorf("pacer resolved to %+v, want %+v", p.Pacer, want)
	}
	// One gain set explicitly is taken as it is.
	p = Config{Strategy: Pacer, Pacer: PacerConfig{Kp: 0.3}}.Resolved()
	if p.Pacer.Kp != 0.3 || p.Pacer.Ki != 0 {
		t.Errorf("gains %v/%v, want 0.3/0", p.Pacer.Kp, p.Pacer.Ki)
	}
}

// The budget has one name in Go and in errors (pipeline.budget, as
// scenarios write it), and keeps its JSON key budget_bytes, which results
// documents have always carried.
func TestBudgetNames(t *testing.T) {
	b, err := json.Marshal(Config{Budget: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"budget_bytes":5`) {
		t.Errorf("JSON %s lacks budget_bytes", b)
	}
	var c Config
	if err := json.Unmarshal([]byte(`{"budget_bytes": 7}`), &c); err != nil || c.Budget != 7 {
		t.Errorf("budget_bytes read as %d (%v)", c.Budget, err)
	}
	var fe *FieldError
	if err := (Config{Strategy: Budget, Budget: 1, ChannelCapacity: 1, GPUWorkers: 1}).Resolved().ValidateFor(10, 10); !errors.As(err, &fe) || fe.Field != "pipeline.budget" {
		t.Errorf("budget error %v names %v, want pipeline.budget", err, fe)
	}
}

// An invalid composition is one problem, not one per gate it names.
func TestInvalidStrategyOneProblem(t *testing.T) {
	err := Config{Strategy: "release+hold", ChannelCapacity: 1, GPUWorkers: 1}.ValidateFor(1, 1)
	joined, _ := err.(interface{ Unwrap() []error })
	if joined == nil {
		t.Fatalf("ValidateFor = %v, want joined field errors", err)
	}
	var fields []string
	for _, e := range joined.Unwrap() {
		var fe *FieldError
		if errors.As(e, &fe) {
			fields = append(fields, fe.Field)
		}
	}
	if len(fields) != 1 || fields[0] != "pipeline.strategy" {
		t.Errorf("release+hold with pw 0: problems with %v, want pipeline.strategy alone", fields)
	}
}
