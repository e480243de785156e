package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/provebench/provebench/bench/results"
)

// The test binary stands in for provebench: `run` starts it as `child`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		os.Exit(execute(context.Background(), os.Args[1:]))
	}
	os.Exit(m.Run())
}

func run(t *testing.T, args ...string) int {
	t.Helper()
	return execute(context.Background(), args)
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const tinyScenario = `version: 1
defaults:
  backend: cpu
  repeats: 2
  warmups: 0
  sample_interval: 5ms
  workload: {constraints: 2^7, partitions: 2, proofs: 2, concurrency: 1}
  pipeline: {partition_workers: 2, channel_capacity: 1}
scenarios:
  - name: release
    pipeline: {strategy: release}
  - name: hold
    pipeline: {strategy: hold}
`

func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	good := writeFile(t, dir, "good.yaml", tinyScenario)
	bad := writeFile(t, dir, "bad.yaml", "version: 1\nscenarios:\n  - name: x\n    pipeline: {strategy: hurry, channel_capacityy: 2}\n")

	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"unknown flag", []string{"run", "--bogus"}, exitUsage},
		{"validate good", []string{"validate", good}, exitOK},
		{"validate bad", []string{"validate", bad}, exitUsage},
		{"validate missing", []string{"validate", filepath.Join(dir, "nope.yaml")}, exitUsage},
		{"run bad yaml", []string{"run", bad, "-o", filepath.Join(dir, "never")}, exitUsage},
		{"run bad filter", []string{"run", good, "--filter", "(", "-o", filepath.Join(dir, "never")}, exitUsage},
		{"run cuda without cuda", []string{"run", good, "--backend", "cuda", "-o", filepath.Join(dir, "never")}, exitUsage},
		{"prove bad size", []string{"prove", "--constraints", "1000"}, exitUsage},
		{"prove", []string{"prove", "--constraints", "2^6", "--out", filepath.Join(dir, "proof")}, exitOK},
		{"prove random key cannot verify", []string{"prove", "--constraints", "2^6", "--key", "random"}, exitFailure},
		{"schema", []string{"schema"}, exitOK},
		{"report missing", []string{"report", filepath.Join(dir, "nope.json"), "-o", dir}, exitUsage},
		{"compare not results", []string{"compare", good, good}, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(t, tc.args...); got != tc.want {
				t.Fatalf("provebench %v: exit %d, want %d", tc.args, got, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "never")); !os.IsNotExist(err) {
		t.Error("bad input left an output directory behind")
	}
	for _, f := range []string{"proof.json", "public.json", "verification_key.json"} {
		if _, err := os.Stat(filepath.Join(dir, "proof", f)); err != nil {
			t.Errorf("prove --out: %v", err)
		}
	}
}

func TestRunReportCompare(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, out := range []string{a, b} {
		if code := run(t, "run", scen, "-o", out); code != exitOK {
			t.Fatalf("run exited %d", code)
		}
	}
	for _, f := range []string{"results.json", "results.csv", "results.bench", "report.md", "report.html", "throughput-memory.png"} {
		if _, err := os.Stat(filepath.Join(a, f)); err != nil {
			t.Errorf("run did not write %s: %v", f, err)
		}
	}
	doc, err := results.Read(filepath.Join(a, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Complete || len(doc.Scenarios) != 2 {
		t.Fatalf("results: complete %v, %d scenarios", doc.Complete, len(doc.Scenarios))
	}
	if code := run(t, "report", filepath.Join(a, "results.json"), "-o", filepath.Join(dir, "rep")); code != exitOK {
		t.Fatalf("report exited %d", code)
	}
	summary := filepath.Join(dir, "summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	if code := run(t, "compare", filepath.Join(a, "results.json"), filepath.Join(b, "results.json")); code != exitOK && code != exitRegression {
		t.Fatalf("compare exited %d", code)
	}
	if st, err := os.Stat(summary); err != nil || st.Size() == 0 {
		t.Errorf("compare did not append to $GITHUB_STEP_SUMMARY: %v", err)
	}
	// A doctored baseline: the new run lost a repetition to a memory limit.
	worse := *doc
	worse.Scenarios = append([]results.Scenario(nil), doc.Scenarios...)
	reps := append([]results.Repetition(nil), worse.Scenarios[0].Repetitions...)
	reps[0].Status = results.StatusMemoryLimit
	worse.Scenarios[0].Repetitions = reps
	data, _ := json.Marshal(&worse)
	worsePath := writeFile(t, dir, "worse.json", string(data))
	if code := run(t, "compare", filepath.Join(a, "results.json"), worsePath); code != exitRegression {
		t.Fatalf("compare against a failed repetition exited %d, want %d", code, exitRegression)
	}
}
