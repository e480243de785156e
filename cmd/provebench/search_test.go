package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/scenarios"
)

// tinySearch sweeps ranges of a configuration small enough to run for
// real, its stage costs written in the file.
const tinySearch = `version: 1
defaults:
  backend: cpu
  repeats: 1
  warmups: 0
  sample_interval: 5ms
  workload: {constraints: 2^7, partitions: 4, proofs: 4, concurrency: 2}
  simulate:
    synthesis: 40ms
    gpu_start: 5ms
    finalize: 5ms
    device_serial: true
    abc_bytes: 3MiB
    wire_bytes: 1MiB
    host: {memory: 64MiB, baseline: 8MiB, devices: 1}
matrix:
  - name: permits
    axes:
      pipeline.strategy: [release, hold]
      pipeline.partition_workers: {from: 1, to: 6, step: 1}
      pipeline.channel_capacity: {from: 1, to: 4, times: 2}
`

// The search writes every prediction, the front and the best; the best
// loads as the winner's own configuration and runs for real.
func TestSearchWritesAndTheBestRuns(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "search.yaml", tinySearch)
	out := filepath.Join(dir, "search")
	bestFile := filepath.Join(dir, "best.yaml")
	if code := runCLI(t, "simulate", scen, "--search", "--memory-cap", "30MiB", "-o", out, "--best-scenario", bestFile); code != exitOK {
		t.Fatalf("simulate --search exited %d", code)
	}

	specs, err := scenarios.Load(scen)
	if err != nil {
		t.Fatal(err)
	}
	found, err := predict.Search(context.Background(), specs, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	report := predict.NewSearchReport(found, 30<<20, nil, nil)
	if report.Best == nil {
		t.Fatal("nothing fits 30MiB: the test's costs need adjusting")
	}
	f, err := os.Open(filepath.Join(out, searchCSVFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 1+len(specs) || len(specs) != 36 {
		t.Fatalf("search.csv: %d rows for %d configurations, %v", len(rows), len(specs), err)
	}
	for i, s := range specs {
		if rows[i+1][0] != s.Name {
			t.Errorf("row %d names %s, want %s", i+1, rows[i+1][0], s.Name)
		}
	}
	front, err := os.ReadFile(filepath.Join(out, searchFrontFile))
	if err != nil || !strings.Contains(string(front), "Fastest under 30.0 MiB: **"+strings.ReplaceAll(report.Best.Name, "_", `\_`)+"**") {
		t.Errorf("search-front.md does not name the best %s (%v):\n%s", report.Best.Name, err, front)
	}

	written, err := scenarios.Load(bestFile)
	if err != nil || len(written) != 1 {
		t.Fatalf("best.yaml loads as %d configurations: %v", len(written), err)
	}
	got, want := written[0], *report.Best.Spec
	got.Source, got.File = want.Source, want.File
	if !reflect.DeepEqual(got, want) {
		t.Errorf("best.yaml loads as\n  %+v\nwant the winner\n  %+v", got, want)
	}

	real := filepath.Join(dir, "real")
	if code := runCLI(t, "run", bestFile, "-o", real, "--no-report"); code != exitOK {
		t.Fatalf("run of the best scenario exited %d", code)
	}
	doc, err := results.Read(filepath.Join(real, "results.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Scenarios) != 1 || doc.Scenarios[0].Name != report.Best.Name || doc.Scenarios[0].Repetitions[0].Status != results.StatusOK {
		t.Errorf("the real run of the best: %+v", doc.Scenarios)
	}
}

func TestSearchRefuses(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "search.yaml", tinySearch)
	badRange := writeFile(t, dir, "bad.yaml", strings.Replace(tinySearch, "{from: 1, to: 6, step: 1}", "{from: 6, to: 1, step: 1}", 1))
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"best without search", []string{"simulate", scen, "--best-scenario", filepath.Join(dir, "b.yaml")}},
		{"best over a searched file", []string{"simulate", scen, "--search", "--best-scenario", scen}},
		{"a range that runs downwards", []string{"simulate", badRange, "--search"}},
		{"a bad cap", []string{"simulate", scen, "--search", "--memory-cap", "30G"}},
	} {
		if code := runCLI(t, tc.args...); code != exitUsage {
			t.Errorf("%s: exited %d, want %d", tc.name, code, exitUsage)
		}
	}
	if data, err := os.ReadFile(scen); err != nil || string(data) != tinySearch {
		t.Errorf("the searched file changed: %v", err)
	}
}

// A calibrated search prints the model's in-sample error beside every
// prediction and the calibration's warnings, and --best-scenario writes
// both into the winner's header.
func TestSearchSaysHowFarToTrustIt(t *testing.T) {
	const xval = "../../docs/results/cpu-quickstart-xval/"
	m, err := predict.Calibrate(t.Context(), []string{xval + "calibration/results.json.gz"}, predict.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	specs, err := scenarios.Load(xval + "search.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in, err := m.InSample(int64(m.Environment.MemoryBytes))
	if err != nil {
		t.Fatal(err)
	}
	best := filepath.Join(t.TempDir(), "best.yaml")
	var out strings.Builder
	if err := runSearch(t.Context(), &out, specs, m, m.Environment, searchFlags{memoryCap: "55MiB", bestScenario: best}); err != nil {
		t.Fatal(err)
	}
	header, err := os.ReadFile(best)
	if err != nil {
		t.Fatal(err)
	}
	beside := "(in-sample error: s/proof " + in.SecondsPerProof.Range() + ", peak RSS " + in.PeakRSS.Range() + ")"
	// That calibration ran beside neighbours taking 71-76% of the CPU.
	for what, text := range map[string]string{"stdout": out.String(), "best.yaml": string(header)} {
		for _, want := range []string{beside, "alibration ran under high host load in 4 of 4 configurations"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q:\n%s", what, want, text)
			}
		}
	}
	if !strings.Contains(out.String(), in.String()) {
		t.Errorf("stdout lacks the in-sample summary %q:\n%s", in, out.String())
	}
}
