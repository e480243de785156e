package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// Five tiny configurations: an explicit scenario and a 2x2 matrix.
const sweepScenario = `version: 1
defaults:
  backend: cpu
  repeats: 1
  warmups: 0
  sample_interval: 5ms
  workload: {constraints: 2^6, partitions: 2, proofs: 1, concurrency: 1}
  pipeline: {partition_workers: 2, channel_capacity: 1}
scenarios:
  - name: release
matrix:
  - name: m
    axes:
      pipeline.strategy: [release, hold]
      pipeline.early_free: [false, true]
`

// reportRows are the configuration names of report.md's summary table, in
// order.
func reportRows(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, summary, _ := strings.Cut(string(data), "## Summary")
	summary, _, _ = strings.Cut(summary, "\n## ")
	var rows []string
	for _, line := range strings.Split(summary, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.HasPrefix(line, "|---") || strings.TrimSpace(cells[1]) == "Scenario" {
			continue
		}
		rows = append(rows, strings.TrimSpace(cells[1]))
	}
	return rows
}

func scenarioNames(t *testing.T, path string) []string {
	t.Helper()
	doc, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range doc.Scenarios {
		names = append(names, sc.Name)
	}
	return names
}

// Running the shards of a sweep and merging them gives the configurations,
// and the report's rows, of the unsharded run, in its order.
func TestShardedMergedEqualsUnsharded(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "sweep.yaml", sweepScenario)
	whole := filepath.Join(dir, "whole")
	if code := runCLI(t, "run", scen, "-o", whole); code != exitOK {
		t.Fatalf("unsharded run exited %d", code)
	}
	wantNames := scenarioNames(t, filepath.Join(whole, "results.json.gz"))
	wantRows := reportRows(t, whole)
	if len(wantNames) != 5 || !slices.Equal(wantRows, []string{"release", `m/strategy=release/early\_free=false`, `m/strategy=release/early\_free=true`, `m/strategy=hold/early\_free=false`, `m/strategy=hold/early\_free=true`}) {
		t.Fatalf("unsharded: %v, report rows %v", wantNames, wantRows)
	}

	// 6 shards of 5 configurations: the last shard is empty.
	for _, n := range []int{2, 3, 6} {
		var shards []string
		for k := 1; k <= n; k++ {
			out := filepath.Join(dir, fmt.Sprintf("n%d", n), fmt.Sprintf("shard-%d", k))
			if code := runCLI(t, "run", scen, "--shard", fmt.Sprintf("%d/%d", k, n), "--no-report", "-o", out); code != exitOK {
				t.Fatalf("shard %d/%d exited %d", k, n, code)
			}
			shards = append(shards, out)
		}
		slices.Reverse(shards) // the order given does not matter
		merged := filepath.Join(dir, fmt.Sprintf("n%d", n), "merged")
		if code := runCLI(t, append(append([]string{"merge"}, shards...), "-o", merged)...); code != exitOK {
			t.Fatalf("merge of %d shards exited %d", n, code)
		}
		if got := scenarioNames(t, filepath.Join(merged, "results.json.gz")); !slices.Equal(got, wantNames) {
			t.Errorf("%d shards merged: %v, want %v", n, got, wantNames)
		}
		if got := reportRows(t, merged); !slices.Equal(got, wantRows) {
			t.Errorf("%d shards merged: report rows %v, want %v", n, got, wantRows)
		}
	}
}

// Bad shard specs and refused merges exit 2 and write nothing.
func TestShardExitStatuses(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	other := writeFile(t, dir, "other.yaml", strings.Replace(tinyScenario, "repeats: 2", "repeats: 1", 1))
	s1, s2, s2other := filepath.Join(dir, "s1"), filepath.Join(dir, "s2"), filepath.Join(dir, "s2other")
	for _, r := range [][]string{{scen, "1/2", s1}, {scen, "2/2", s2}, {other, "2/2", s2other}} {
		if code := runCLI(t, "run", r[0], "--shard", r[1], "--no-report", "-o", r[2]); code != exitOK {
			t.Fatalf("run --shard %s exited %d", r[1], code)
		}
	}
	doc, err := results.Read(filepath.Join(s2, "results.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Shard == nil || doc.Shard.Index != 2 || len(doc.ScenarioFiles) != 1 || doc.ScenarioFiles[0].Path != scen || len(doc.Scenarios) != 1 || doc.Scenarios[0].Name != "hold" {
		t.Fatalf("shard 2/2: shard %+v, files %+v, %d scenarios", doc.Shard, doc.ScenarioFiles, len(doc.Scenarios))
	}
	doc.ToolVersion = "v9.9.9 feedface"
	newer := filepath.Join(dir, "newer.json")
	if err := results.Write(newer, doc); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "whole.json")
	doc.Shard = nil
	if err := results.Write(whole, doc); err != nil {
		t.Fatal(err)
	}

	never := filepath.Join(dir, "never")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"shard 0", []string{"run", scen, "--shard", "0/2", "-o", never}, nil, exitUsage},
		{"shard past n", []string{"run", scen, "--shard", "3/2", "-o", never}, nil, exitUsage},
		{"shard not k/n", []string{"run", scen, "--shard", "half", "-o", never}, nil, exitUsage},
		{"shard-count without auto", []string{"run", scen, "--shard-count", "2", "-o", never}, nil, exitUsage},
		{"auto without index", []string{"run", scen, "--shard", "auto", "--shard-count", "2", "-o", never}, nil, exitUsage},
		{"auto without count", []string{"run", scen, "--shard", "auto", "-o", never}, map[string]string{"JOB_COMPLETION_INDEX": "1"}, exitUsage},
		{"auto index past count", []string{"run", scen, "--shard", "auto", "-o", never}, map[string]string{"JOB_COMPLETION_INDEX": "2", "PROVEBENCH_SHARD_COUNT": "2"}, exitUsage},
		{"merge without -o", []string{"merge", s1, s2}, nil, exitUsage},
		{"merge missing file", []string{"merge", s1, filepath.Join(dir, "nope"), "-o", never}, nil, exitUsage},
		{"merge overlap", []string{"merge", s1, s2, s2, "-o", never}, nil, exitUsage},
		{"merge missing shard", []string{"merge", s1, "-o", never}, nil, exitUsage},
		{"merge other scenario file", []string{"merge", s1, s2other, "-o", never}, nil, exitUsage},
		{"merge other version", []string{"merge", s1, newer, "-o", never}, nil, exitUsage},
		{"merge unsharded", []string{"merge", s1, whole, "-o", never}, nil, exitUsage},
		{"merge allow missing", []string{"merge", s1, "--allow-missing", "--no-report", "-o", filepath.Join(dir, "partial")}, nil, exitOK},
		{"auto", []string{"run", scen, "--shard", "auto", "--no-report", "-o", filepath.Join(dir, "auto")}, map[string]string{"JOB_COMPLETION_INDEX": "1", "PROVEBENCH_SHARD_COUNT": "2"}, exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if got := runCLI(t, tc.args...); got != tc.want {
				t.Fatalf("provebench %v: exit %d, want %d", tc.args, got, tc.want)
			}
		})
	}
	if _, err := os.Stat(never); !os.IsNotExist(err) {
		t.Error("bad input left an output directory behind")
	}
	// --shard auto with index 1 of 2 is shard 2/2: the same as s2.
	if got, want := scenarioNames(t, filepath.Join(dir, "auto", "results.json.gz")), scenarioNames(t, filepath.Join(s2, "results.json.gz")); !slices.Equal(got, want) {
		t.Errorf("--shard auto ran %v, want %v", got, want)
	}
	partial, err := results.Read(filepath.Join(dir, "partial", "results.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if partial.Complete || len(partial.Scenarios) != 1 {
		t.Errorf("merge --allow-missing: complete %v, %d scenarios", partial.Complete, len(partial.Scenarios))
	}
}
