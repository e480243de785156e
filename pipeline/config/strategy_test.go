package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// The composed names keep the order they had before the registry: presets,
// then the compositions with the permit gate outermost.
func TestStrategyNames(t *testing.T) {
	want := []string{"release", "hold", "budget", "pacer",
		"budget+pacer", "release+pacer", "release+budget", "release+budget+pacer",
		"hold+pacer", "hold+budget", "hold+budget+pacer"}
	if got := StrategyNames(); !slices.Equal(got, want) {
		t.Errorf("StrategyNames() = %v, want %v", got, want)
	}
}

// Every registered gate has all its parts: a name, a description, a
// colour of its own, a validation and a bound (its maker is pipeline's
// TestEveryGateHasItsMaker).
func TestEveryGateRegistersEverything(t *testing.T) {
	reg := Registered()
	colours := map[int]Strategy{}
	groups := map[string]bool{}
	for _, d := range reg {
		if d.Name == "" || d.Doc == "" || d.Validate == nil || d.Bound == nil {
			t.Errorf("%q: incomplete registration %+v", d.Name, d)
		}
		if other, ok := colours[d.Colour]; ok {
			t.Errorf("%s and %s share colour %d", d.Name, other, d.Colour)
		}
		colours[d.Colour] = d.Name
		g := d.Group
		if g == "" {
			g = string(d.Name)
		}
		groups[g] = true
		if !strings.Contains(reg.Doc(), string(d.Name)+" ("+d.Doc+")") {
			t.Errorf("Doc() lacks %s", d.Name)
		}
	}
}

// A gate added to a registry appears, with nothing else edited, in the
// strategy names (alone and composed), in validation and in the bound.
func TestRegisteredDoubleAppearsEverywhere(t *testing.T) {
	const double Strategy = "double"
	reg := append(Registered(), StrategyDef{
		Name: double, Doc: "a test double", Colour: 9,
		Validate: func(c Config, _, _ int64, errs *fieldErrors) {
			if c.ChannelCapacity%2 != 0 {
				errs.add("pipeline.channel_capacity", "odd for the double")
			}
		},
		Bound: func(c Config, _, _ int64) (int64, string, bool) { return 3, "the double", true },
	})
	names := reg.StrategyNames()
	for _, want := range []string{"double", "hold+double", "budget+pacer+double"} {
		if !slices.Contains(names, want) {
			t.Errorf("StrategyNames() lacks %s: %v", want, names)
		}
	}
	c := Config{Strategy: "hold+double", PartitionWorkers: 8, ChannelCapacity: 1, GPUWorkers: 1}
	var fe *FieldError
	var errs fieldErrors
	if reg.validate(c, 1, 1, &errs); len(errs) != 1 || !errors.As(errs[0], &fe) || fe.Problem != "odd for the double" {
		t.Errorf("Validate = %v, want the double's problem", errs)
	}
	if n, why, ok := reg.Bound(c, 1, 2); !ok || n != 3 || why != "the double" {
		t.Errorf("Bound = %d, %q, %v; want the double's 3 (hold's is 8+1+2)", n, why, ok)
	}
	if _, ok := reg.Colours()["double"]; !ok {
		t.Error("Colours() lacks the double")
	}
	if n, why, _ := reg.Bound(Config{Strategy: Hold, PartitionWorkers: 8, ChannelCapacity: 1}, 1, 2); n != 11 || why != "held permits + channel + GPU workers" {
		t.Errorf("hold alone: %d, %q", n, why)
	}
	if _, _, ok := reg.Bound(Config{Strategy: Release}, 1, 2); ok {
		t.Error("release bounds nothing, yet Bound says it does")
	}
}

// A pacer written with kp and ki both 0 is refused before Resolved would
// turn the zeros into the defaults.
func TestPacerWrittenWithoutFeedback(t *testing.T) {
	c := Config{Strategy: "budget+pacer", Pacer: PacerConfig{TargetDepth: 2}}
	var fe *FieldError
	if err := c.ValidateWritten(); !errors.As(err, &fe) || fe.Field != "pipeline.pacer.kp" {
		t.Errorf("ValidateWritten = %v, want pipeline.pacer.kp", err)
	}
	if err := (Config{Strategy: Hold}).ValidateWritten(); err != nil {
		t.Errorf("hold: %v", err)
	}
}
