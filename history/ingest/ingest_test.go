package ingest

import (
	"encoding/json"
	"testing"

	"github.com/provebench/provebench/results"
)

const real = "../testdata/nightly-1.json.gz"

func TestFromRun(t *testing.T) {
	doc, err := results.Read(real)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromRun(doc, real); err == nil {
		t.Fatal("a document without a git commit was read")
	}
	doc.Environment.GitCommit = "0123456789abcdef0123456789abcdef01234567"
	d, err := FromRun(doc, real)
	if err != nil {
		t.Fatal(err)
	}
	if d.Run.Commit != doc.Environment.GitCommit || !d.Run.Time.Equal(doc.StartedAt) || d.Run.Host != doc.Environment.Hostname || d.Run.Source != real {
		t.Errorf("run %+v", d.Run)
	}
	// Every measured repetition, warm-ups left out, each metric it has.
	type key struct {
		config, metric string
		rep            int
	}
	got := map[key]float64{}
	for _, s := range d.Samples {
		if s.Backend != "cpu" {
			t.Errorf("backend %q", s.Backend)
		}
		got[key{s.Configuration, s.Metric, s.Repetition}] = s.Value
	}
	measured := 0
	for _, sc := range doc.Scenarios {
		for _, r := range sc.Repetitions {
			if !r.Measured() {
				continue
			}
			measured++
			if got[key{sc.Name, "peak_rss_bytes", r.Index}] != float64(r.PeakRSSBytes) ||
				got[key{sc.Name, "seconds_per_proof", r.Index}] != r.SecondsPerProof ||
				got[key{sc.Name, "cpu_seconds", r.Index}] != r.CPUUserSeconds+r.CPUSystemSeconds {
				t.Errorf("%s repetition %d: figures not taken", sc.Name, r.Index)
			}
			if _, ok := got[key{sc.Name, "peak_gpu_memory_bytes", r.Index}]; ok {
				t.Error("a GPU figure taken from a run without NVML")
			}
		}
	}
	if measured != 6 {
		t.Fatalf("%d measured repetitions in the fixture, want 6", measured)
	}
	doc.Simulated = &results.Simulation{Model: json.RawMessage(`{}`)}
	if _, err := FromRun(doc, real); err == nil {
		t.Error("a simulated document was read")
	}
}
