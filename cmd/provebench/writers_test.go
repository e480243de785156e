package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// Issue 31: run, merge and simulate write the same set of results files
// into their output folder (the document in the chosen format and no
// other, results.csv, results.bench, the manifest that lists them), and a
// simulated document's tables say that they are predictions.
func TestEveryWriterWritesOneFolder(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	ran, merged, simulated := filepath.Join(dir, "run"), filepath.Join(dir, "merged"), filepath.Join(dir, "simulated")
	// merge and simulate write into folders holding a stale document of
	// the other format.
	stale, err := results.Read(cpuCalibrate)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(merged, "results.json.gz"), filepath.Join(simulated, "results.json")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.Write(p, stale); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"run", scen, "--filter", "^hold$", "--repeat", "1", "--shard", "1/1", "--no-report", "-o", ran},
		{"merge", ran, "--results-format", "json", "--no-report", "-o", merged},
		{"simulate", "../../docs/results/cpu-simulate/predict.yaml", "--calibration", cpuCalibrate, "--no-report", "-o", simulated},
	} {
		if code, _, stderr := capture(t, args...); code != exitOK {
			t.Fatalf("provebench %v: exit %d: %s", args, code, stderr)
		}
	}
	for _, c := range []struct {
		dir, document string
		simulated     bool
	}{{ran, "results.json.gz", false}, {merged, "results.json", false}, {simulated, "results.json.gz", true}} {
		var names []string
		entries, err := os.ReadDir(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != ".provebench.lock" { // run's, held while it ran
				names = append(names, e.Name())
			}
		}
		want := []string{results.ManifestName, "results.bench", "results.csv", c.document}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("%s holds %v, want %v", c.dir, names, want)
		}
		listed, err := results.Folder{Dir: c.dir}.Manifest()
		if err != nil || !slices.Equal(listed, []string{c.document, "results.csv", "results.bench"}) {
			t.Errorf("%s: manifest %v, %v", c.dir, listed, err)
		}
		csv, err := os.ReadFile(filepath.Join(c.dir, "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
		if len(lines) < 2 || strings.HasPrefix(lines[0], "simulated,") != c.simulated {
			t.Errorf("%s: results.csv (%d lines) starts %q; simulated %v", c.dir, len(lines), lines[0][:min(len(lines[0]), 40)], c.simulated)
		}
		bench, err := os.ReadFile(filepath.Join(c.dir, "results.bench"))
		if err != nil || !strings.Contains(string(bench), "BenchmarkProvebench/") {
			t.Fatalf("%s: results.bench without a benchmark line: %v", c.dir, err)
		}
		if strings.Contains(string(bench), "simulated: true") != c.simulated {
			t.Errorf("%s: results.bench says simulated %v, want %v", c.dir, !c.simulated, c.simulated)
		}
	}
}
