package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// mergedRun is a merge of two shards; node-2 has other hardware unless
// sameHost.
func mergedRun(sameHost bool) *results.Run {
	h1 := results.Environment{Hostname: "node-1", CPUModel: "EPYC", CPUs: 16,
		GPUs: []results.GPU{{Index: 0, Name: "NVIDIA H200"}, {Index: 1, Name: "NVIDIA H200"}}}
	h2 := results.Environment{Hostname: "node-2", CPUModel: "Xeon", CPUs: 8, GPUs: []results.GPU{{Name: "NVIDIA L4"}}}
	if sameHost {
		h2 = h1
	}
	run := &results.Run{Complete: true, Environment: h1,
		Shards: []results.ShardRun{{Index: 1, Count: 2, Environment: h1}, {Index: 2, Count: 2, Environment: h2}}}
	for i, name := range []string{"a", "b", "c"} {
		run.Scenarios = append(run.Scenarios, results.Scenario{Name: name, Strategy: "hold", Shard: i%2 + 1})
	}
	return run
}

func summaryTable(t *testing.T, run *results.Run) (*table, []string) {
	t.Helper()
	d := buildDocument(run, "t", summaries(run), map[string]bool{}, timelineNames(summaries(run)))
	for _, s := range d.Sections {
		if s.Heading == "Summary" {
			return s.Table, d.Meta
		}
	}
	t.Fatal("no summary section")
	return nil, nil
}

func TestHostPerConfiguration(t *testing.T) {
	tab, meta := summaryTable(t, mergedRun(false))
	if tab.Header[1] != "Host" {
		t.Fatalf("header %v: no host column", tab.Header)
	}
	want := []string{"node-1 (EPYC, 16 CPUs, NVIDIA H200 ×2)", "node-2 (Xeon, 8 CPUs, NVIDIA L4)", "node-1 (EPYC, 16 CPUs, NVIDIA H200 ×2)"}
	if len(tab.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(tab.Rows), len(want))
	}
	for i, row := range tab.Rows {
		if len(row) != len(tab.Header) || row[1] != want[i] {
			t.Errorf("row %d: %v, want host %s", i, row, want[i])
		}
	}
	if m := strings.Join(meta, "\n"); !strings.Contains(m, "Merged from 2 shards: 1/2 on node-1") || !strings.Contains(m, "The hosts differ") {
		t.Errorf("meta does not tell the shards' hosts apart:\n%s", m)
	}

	tab, meta = summaryTable(t, mergedRun(true))
	if slices.Contains(tab.Header, "Host") {
		t.Errorf("one host, yet a host column: %v", tab.Header)
	}
	if m := strings.Join(meta, "\n"); !strings.Contains(m, "Merged from 2 shards") || strings.Contains(m, "The hosts differ") {
		t.Errorf("meta of a one-host merge:\n%s", m)
	}
	plain := mergedRun(true)
	plain.Shards = nil
	if tab, _ := summaryTable(t, plain); slices.Contains(tab.Header, "Host") {
		t.Error("an unmerged run has a host column")
	}
}
