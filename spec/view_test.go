package spec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
)

// The view a results document's readers decode (results.SpecView) holds
// what spec's own encoder wrote, every field as this decoder reads it
// back, and one key for one configuration however its document spelled it.
func TestSpecViewRoundTrips(t *testing.T) {
	in := Spec{
		Name: "pacer/20ms", Source: "s.yaml:12", File: "s", Labels: map[string]string{"pipeline.pacer.interval": "20ms"},
		Workload: config.Workload{Constraints: 1 << 12, Partitions: 4, Proofs: 2, Concurrency: 1, Synthesis: config.SynthesisCached},
		Pipeline: config.Config{Strategy: config.Pacer, PartitionWorkers: 2, ChannelCapacity: 1,
			Pacer: config.PacerConfig{Interval: 20 * time.Millisecond, Kp: 0.1}},
		Backend: "cpu", Repeats: 3, SampleInterval: 10 * time.Millisecond, Timeout: 2 * time.Minute, MemoryLimit: 16 << 30,
		Vars: map[string]string{"d": "1h"},
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	sc := results.Scenario{Name: in.Name, Spec: raw}
	v, err := sc.DecodeSpec()
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if len(v.Settings) == 0 {
		t.Fatal("no settings in the view")
	}
	for path, want := range map[string]any{
		"name":                           back.Name,
		"source":                         back.Source,
		"labels.pipeline.pacer.interval": back.Labels["pipeline.pacer.interval"], // the user's text, as written
		"vars.d":                         back.Vars["d"],
		"workload.constraints":           float64(back.Workload.Constraints),
		"workload.synthesis":             back.Workload.Synthesis,
		"pipeline.strategy":              string(back.Pipeline.Strategy),
		"pipeline.channel_capacity":      float64(back.Pipeline.ChannelCapacity),
		"pipeline.pacer.interval":        float64(back.Pipeline.Pacer.Interval),
		"pipeline.pacer.kp":              back.Pipeline.Pacer.Kp,
		"sample_interval":                float64(back.SampleInterval),
		"timeout":                        float64(back.Timeout),
		"repeats":                        float64(back.Repeats),
	} {
		if got, ok := v.Settings[path]; !ok || got != want {
			t.Errorf("%s: %v (present %v), want %v", path, got, ok, want)
		}
	}
	if v.MemoryLimit != back.MemoryLimit || v.MemoryLimit == 0 {
		t.Errorf("memory limit %d, want %d", v.MemoryLimit, back.MemoryLimit)
	}

	// The same configuration as a document before durations had units
	// wrote it, its fields in another order, run more often from another
	// line: the same key once repeats and source are left out.
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	tree["sample_interval"], tree["timeout"] = float64(in.SampleInterval), float64(in.Timeout)
	tree["pipeline"].(map[string]any)["pacer"].(map[string]any)["interval"] = float64(in.Pipeline.Pacer.Interval)
	tree["repeats"], tree["source"] = 5, "other.yaml:3"
	old, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	ov, err := (&results.Scenario{Spec: old}).DecodeSpec()
	if err != nil {
		t.Fatal(err)
	}
	if v.Key("repeats", "source") != ov.Key("repeats", "source") {
		t.Errorf("one configuration, two keys:\n%s\n%s", v.Key("repeats", "source"), ov.Key("repeats", "source"))
	}
	if v.Key() == ov.Key() {
		t.Error("the keys leave out what they were not told to")
	}
	in.Pipeline.ChannelCapacity = 2
	changed, _ := json.Marshal(in)
	cv, err := (&results.Scenario{Spec: changed}).DecodeSpec()
	if err != nil {
		t.Fatal(err)
	}
	if cv.Key("repeats", "source") == v.Key("repeats", "source") {
		t.Error("another channel capacity, the same key")
	}
	d := cv.Section("pipeline")
	if d["pipeline.channel_capacity"] != 2.0 {
		t.Errorf("pipeline section %v", d)
	}
	for k := range d {
		if !strings.HasPrefix(k, "pipeline.") {
			t.Errorf("pipeline section holds %s", k)
		}
	}
}
