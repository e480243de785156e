package predict_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/scenarios"
	"github.com/provebench/provebench/spec"
)

// searchScenario is a cuzk-like search: Phase-12 stage costs of 2^27
// constraint partitions written in the file, 526 configurations.
const searchScenario = `version: 1
defaults:
  backend: cuda
  key: random
  workload: {constraints: 2^27, partitions: 10, proofs: 12, concurrency: 4}
  simulate:
    synthesis: 45s
    synthesis_spread: 10s
    gpu_start: 0.9s
    finalize: 0.92s
    device_serial: true
    abc_bytes: 12GiB
    wire_bytes: 4GiB
    host: {memory: 512GiB, baseline: 69GiB, devices: 1}
matrix:
  - name: permits
    axes:
      pipeline.strategy: [release, hold]
      pipeline.partition_workers: {from: 4, to: 18, step: 2}
      pipeline.channel_capacity: {from: 1, to: 16, step: 1}
  - name: budget
    base: {pipeline: {early_free: true, channel_capacity: 12}}
    axes:
      pipeline.strategy: [budget, budget+pacer]
      pipeline.budget: {from: 96GiB, to: 320GiB, step: 16GiB}
      pipeline.synthesis_workers: [12, 18, 24]
      pipeline.pacer.target_depth: {from: 1, to: 4, times: 2}
`

func searchSpecs(tb testing.TB) []spec.Spec {
	tb.Helper()
	specs, err := scenarios.LoadBytes("search.yaml", []byte(searchScenario))
	if err != nil {
		tb.Fatal(err)
	}
	return specs
}

// Search returns the predictions in the order of its specs, each the
// prediction of that spec alone.
func TestSearchKeepsOrder(t *testing.T) {
	specs := searchSpecs(t)
	if len(specs) != 256+270 {
		t.Fatalf("%d configurations", len(specs))
	}
	picked := []spec.Spec{specs[0], specs[100], specs[300], specs[len(specs)-1]}
	found, err := predict.Search(context.Background(), picked, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != len(picked) {
		t.Fatalf("%d predictions of %d configurations", len(found), len(picked))
	}
	for i, c := range found {
		alone, err := predict.Search(context.Background(), picked[i:i+1], nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != picked[i].Name || c.Spec != &picked[i] || c.SecondsPerProof != alone[0].SecondsPerProof || c.PeakRSS != alone[0].PeakRSS {
			t.Errorf("%d: %+v, alone %+v", i, c, alone[0])
		}
	}
}

func TestSearchStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := predict.Search(ctx, searchSpecs(t), nil, 0); err == nil {
		t.Error("a cancelled search returned no error")
	}
}

func TestSearchReportWriters(t *testing.T) {
	specs := searchSpecs(t)[:3]
	specs[2].Labels = nil // an explicit scenario beside matrix points
	found := []predict.Candidate{
		{Name: specs[0].Name, SecondsPerProof: 30, PeakRSS: 400 << 30, Spec: &specs[0]},
		{Name: specs[1].Name, SecondsPerProof: 25, PeakRSS: 500 << 30, Spec: &specs[1]},
		{Name: "explicit", SecondsPerProof: 0, PeakRSS: 600 << 30, OOM: true, Spec: &specs[2]},
	}
	r := predict.NewSearchReport(found, 450<<30, []string{"search.yaml"}, nil)
	if r.Best == nil || r.Best.Name != specs[0].Name || len(r.Front) != 2 {
		t.Fatalf("best %+v, front %+v", r.Best, r.Front)
	}
	var csv strings.Builder
	if err := r.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	want := `configuration,seconds_per_proof,peak_rss_bytes,oom,front,pipeline.channel_capacity,pipeline.partition_workers,pipeline.strategy
permits/strategy=release/partition_workers=4/channel_capacity=1,30.0000,429496729600,false,true,1,4,release
permits/strategy=release/partition_workers=4/channel_capacity=2,25.0000,536870912000,false,true,2,4,release
explicit,,644245094400,true,false,,,
`
	if csv.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", csv.String(), want)
	}
	var md strings.Builder
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"3 configurations of search.yaml simulated, stage costs as the scenarios write them (no calibration); 1 run out of memory.",
		"| permits/strategy=release/partition\\_workers=4/channel\\_capacity=1 | 30.00 | 400 GiB |\n| permits/strategy=release/partition\\_workers=4/channel\\_capacity=2 | 25.00 | 500 GiB |\n\n",
		"Fastest under 450 GiB: **permits/strategy=release/partition\\_workers=4/channel\\_capacity=1**, 30.00 s/proof, peak RSS 400 GiB.",
	} {
		if !strings.Contains(md.String(), line) {
			t.Errorf("no %q in\n%s", line, md.String())
		}
	}
	r = predict.NewSearchReport(found, 0, []string{"search.yaml"}, []string{"cal.json"})
	if r.Best == nil || r.Best.Name != specs[1].Name || r.Calibrated() != "calibrated on cal.json" {
		t.Errorf("without a cap: best %+v, %s", r.Best, r.Calibrated())
	}
	if r = predict.NewSearchReport(found, 100<<30, nil, nil); r.Best != nil {
		t.Errorf("a best under a cap nothing fits: %+v", r.Best)
	}
}

// BenchmarkSearch searches 526 configurations of 2^27-constraint cuzk-like
// scenarios: go test -bench Search ./predict.
func BenchmarkSearch(b *testing.B) {
	specs := searchSpecs(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := predict.Search(context.Background(), specs, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(specs)), "configurations")
}

// Issue 20, item 7: a simulated document of a large sweep keeps no series,
// so that its size grows by kilobytes per configuration, not by the
// hundred of a timeline; a small one keeps them.
func TestDocumentSeriesBounded(t *testing.T) {
	specs := searchSpecs(t)[:predict.MaxSeriesConfigurations+1]
	doc, err := predict.Document(context.Background(), specs, nil, results.Environment{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Scenarios) != len(specs) {
		t.Fatalf("%d configurations simulated of %d", len(doc.Scenarios), len(specs))
	}
	for _, sc := range doc.Scenarios {
		if sc.Repetitions[0].Series != nil {
			t.Fatalf("%s: a series in a document of %d configurations", sc.Name, len(specs))
		}
	}
	data, _ := json.Marshal(doc)
	if per := len(data) / len(specs); per > 8<<10 {
		t.Errorf("%d bytes per configuration", per)
	}
	small, err := predict.Document(context.Background(), specs[:2], nil, results.Environment{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Scenarios) != 2 {
		t.Fatalf("%d configurations simulated of 2", len(small.Scenarios))
	}
	for _, sc := range small.Scenarios {
		if s := sc.Repetitions[0].Series; s == nil || len(s.T) == 0 {
			t.Errorf("%s: no series in a document of 2 configurations", sc.Name)
		}
	}
}
