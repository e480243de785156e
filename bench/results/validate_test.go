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
