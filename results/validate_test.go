package results

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func validDoc() *Run {
	t := []float64{0, 0.01, 0.02}
	g := uint64(1)
	return &Run{
		Schema: SchemaVersion, Tool: "provebench",
		Scenarios: []Scenario{{
			Name: "a", Spec: json.RawMessage(`{}`),
			Repetitions: []Repetition{{Status: StatusOK, Series: &Series{
				T: t, RSSBytes: []uint64{1, 2, 3}, GPUMemoryBytes: []*uint64{&g, nil, &g},
				Counters: map[string][]int64{"partitions_done": {0, 1, 2}},
			}}},
		}},
	}
}

func encode(t *testing.T, r *Run) []byte {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Issue 13, item 9: documents are validated on read, fully.
func TestDecodeValidates(t *testing.T) {
	if _, err := Decode("ok.json", encode(t, validDoc())); err != nil {
		t.Fatalf("a valid document: %v", err)
	}
	edge := validDoc() // what real runs write: a busy fraction a hair above 1, times during setup
	edge.Scenarios[0].Spec = json.RawMessage(`{"workload": {"constraints": 16384}, "repeats": 3, "warmups": 0}`)
	edge.Scenarios[0].Repetitions[0].DeviceBusyFraction = new(1.0004)
	edge.Scenarios[0].Repetitions[0].ProcessSeconds = 1.5
	edge.Scenarios[0].Repetitions[0].Series.T = []float64{-1.2, 0, 0}
	if _, err := Decode("edge.json", encode(t, edge)); err != nil {
		t.Fatalf("a valid document at the edges: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Run)
		want   string
	}{
		{"no scenarios", func(r *Run) { r.Scenarios = nil }, "no scenarios"},
		{"bogus status", func(r *Run) { r.Scenarios[0].Repetitions[0].Status = "bogus" },
			`scenarios[0].repetitions[0].status: "bogus" is not one of ok, failed`},
		{"short column", func(r *Run) { r.Scenarios[0].Repetitions[0].Series.RSSBytes = []uint64{1} },
			"scenarios[0].repetitions[0].series.rss_bytes: 1 values for 3 times"},
		{"short counter", func(r *Run) { r.Scenarios[0].Repetitions[0].Series.Counters["partitions_done"] = nil },
			"series.counters.partitions_done: 0 values for 3 times"},
		{"short GPU column", func(r *Run) { r.Scenarios[0].Repetitions[0].Series.GPUMemoryBytes = []*uint64{nil} },
			"series.gpu_memory_bytes: 1 values for 3 times"},
		{"negative figure", func(r *Run) { r.Scenarios[0].Repetitions[0].WallSeconds = -1 }, "wall_seconds: -1 is not a figure"},
		{"unnamed", func(r *Run) { r.Scenarios[0].Name = "" }, "scenarios[0].name: missing"},
		{"unknown run order", func(r *Run) { r.RunOrder = "shuffled" }, `run_order: "shuffled" is not "interleaved"`},
		{"duplicate", func(r *Run) { r.Scenarios = append(r.Scenarios, r.Scenarios[0]) }, `scenarios[1].name: "a" already names scenarios[0]`},
		// Issue 20, item 10: times, fractions and settings no run produces.
		{"negative stage time", func(r *Run) {
			r.Scenarios[0].Repetitions[0].Stages = map[string]StageSummary{"synthesis": {Count: 2, TotalSeconds: 1, MeanSeconds: -0.5, P50Seconds: 0.5, P90Seconds: 0.5, MaxSeconds: 0.5}}
		}, "scenarios[0].repetitions[0].stages.synthesis.mean_seconds: -0.5 is not a figure"},
		{"negative stage count", func(r *Run) {
			r.Scenarios[0].Repetitions[0].Stages = map[string]StageSummary{"msm_a": {Count: -1}}
		}, "stages.msm_a.count: -1 is negative"},
		{"series time before the child", func(r *Run) {
			r.Scenarios[0].Repetitions[0].ProcessSeconds = 2
			r.Scenarios[0].Repetitions[0].Series.T[0] = -5
		}, "series.t[0]: -5 s is before the child started"},
		{"series times out of order", func(r *Run) { r.Scenarios[0].Repetitions[0].Series.T[2] = 0.005 }, "series.t[2]: 0.005 s is before the time before it"},
		{"busy fraction", func(r *Run) { r.Scenarios[0].Repetitions[0].DeviceBusyFraction = new(1e300) }, "device_busy_fraction: 1e+300 is not a fraction"},
		{"steady busy fraction", func(r *Run) { f := 1.2; r.Scenarios[0].Repetitions[0].SteadyDeviceBusyFraction = &f }, "steady_device_busy_fraction: 1.2 is not a fraction"},
		{"GPU utilisation sample", func(r *Run) {
			u := 7.0
			r.Scenarios[0].Repetitions[0].Series.GPUUtilization = []*float64{nil, &u, nil}
		}, "series.gpu_utilization[1]: 7 is not a fraction"},
		{"steal fraction", func(r *Run) { r.Scenarios[0].Repetitions[0].HostLoad = &HostLoad{Load1: 1, StealFraction: 2} }, "host_load.steal_fraction: 2 is not a fraction"},
		{"spec of 0 constraints", func(r *Run) { r.Scenarios[0].Spec = json.RawMessage(`{"workload": {"constraints": 0}, "repeats": 1}`) },
			"scenarios[0].spec.workload.constraints: 0 is below 1"},
		{"spec of -1 repeats", func(r *Run) { r.Scenarios[0].Spec = json.RawMessage(`{"repeats": -1}`) }, "scenarios[0].spec.repeats: -1 is below 1"},
		{"negative constraints", func(r *Run) { r.Scenarios[0].Constraints = -4 }, "scenarios[0].constraints: -4 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validDoc()
			tc.mutate(r)
			_, err := Decode("bad.json", encode(t, r))
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bad.json: ") {
				t.Fatalf("err = %v\nwant ErrInvalid naming the file and containing %q", err, tc.want)
			}
		})
	}
	if _, err := Decode("x.json", append(encode(t, validDoc()), []byte(`{"more":1}`)...)); err == nil {
		t.Fatal("data after the document accepted")
	}
}

// A failed GPU sample is null in the document, not 0, and reads back as
// absent.
func TestGPUGapsRoundTrip(t *testing.T) {
	data := encode(t, validDoc())
	if !strings.Contains(string(data), `"gpu_memory_bytes_delta":[1,null,0]`) {
		t.Fatalf("encoded: %s", data)
	}
	r, err := Decode("x.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if col := r.Scenarios[0].Repetitions[0].Series.GPUMemoryBytes; col[1] != nil || *col[2] != 1 {
		t.Fatalf("decoded %v", col)
	}
}
