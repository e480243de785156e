package spec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/pipeline/config"
)

// Durations are written with their unit and read back; a document written
// before, with nanoseconds, still reads.
func TestSpecJSONDurations(t *testing.T) {
	in := Spec{Name: "x", SampleInterval: 10 * time.Millisecond, Timeout: 2 * time.Minute, Repeats: 3,
		Pipeline: config.Config{Strategy: config.Pacer, Pacer: config.PacerConfig{Interval: 20 * time.Millisecond, Kp: 0.1}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"sample_interval":"10ms"`, `"timeout":"2m0s"`, `"interval":"20ms"`, `"kp":0.1`, `"repeats":3`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var out Spec
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Name != "x" || out.SampleInterval != in.SampleInterval || out.Timeout != in.Timeout || out.Repeats != 3 ||
		out.Pipeline.Pacer != in.Pipeline.Pacer || out.Pipeline.Strategy != config.Pacer {
		t.Errorf("round trip: %+v", out)
	}
	old := `{"name":"y","sample_interval":10000000,"timeout":120000000000,"pipeline":{"pacer":{"interval":20000000}}}`
	var o Spec
	if err := json.Unmarshal([]byte(old), &o); err != nil {
		t.Fatal(err)
	}
	if o.SampleInterval != 10*time.Millisecond || o.Timeout != 2*time.Minute || o.Pipeline.Pacer.Interval != 20*time.Millisecond {
		t.Errorf("old document: %+v", o)
	}
}
