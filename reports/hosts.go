package reports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/provebench/provebench/results"
)

// hostLabel names a host and its hardware in a few words:
// "node-1 (AMD EPYC 9654, 192 CPUs, NVIDIA H200 ×2)".
func hostLabel(env *results.Environment) string {
	parts := []string{orUnknown(env.CPUModel), fmt.Sprintf("%d CPUs", env.CPUs)}
	var gpus []string
	count := map[string]int{}
	for _, g := range env.GPUs {
		if count[g.Name]++; count[g.Name] == 1 {
			gpus = append(gpus, g.Name)
		}
	}
	for _, g := range gpus {
		if count[g] > 1 {
			g = fmt.Sprintf("%s ×%d", g, count[g])
		}
		parts = append(parts, g)
	}
	return fmt.Sprintf("%s (%s)", orUnknown(env.Hostname), strings.Join(parts, ", "))
}

// scenarioHosts labels the host of every scenario, and says whether they
// differ (a merge of shards run on several hosts).
func scenarioHosts(run *results.Run) ([]string, bool) {
	labels := make([]string, len(run.Scenarios))
	for i := range run.Scenarios {
		labels[i] = hostLabel(run.ScenarioEnvironment(i))
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(labels)))
	return labels, len(distinct) > 1
}

// markLoadSkews marks the configurations whose repetitions ran under a
// different host load than the rest's, so that the summary, the warnings
// and the throughput plot say so wherever their timed figures are read.
func markLoadSkews(run *results.Run, sums []*scenarioSummary) {
	for _, k := range results.LoadSkews(run) {
		for _, s := range sums {
			if s.sc.Name == k.Scenario {
				s.loadSkew = &k
			}
		}
	}
}

// loadSkewWarning is the report's warning about configurations measured
// under a different host load, with the figures; empty when there are
// none.
func loadSkewWarning(run *results.Run, sums []*scenarioSummary) string {
	var what []string
	for _, s := range sums {
		if s.loadSkew != nil {
			what = append(what, s.sc.Name+": "+s.loadSkew.String())
		}
	}
	if len(what) == 0 {
		return ""
	}
	w := "The host's load differed between configurations (their throughput and s/proof are the host's as much as their own; " +
		"rank them on the exact figures, or measure again on a quieter host): " + strings.Join(what, "; ") + "."
	if run.RunOrder != results.RunOrderInterleaved {
		w += " The repetitions ran one configuration after another; interleaved (run's default) the load falls on all alike."
	}
	return w
}

// addHostColumn puts each configuration's host after its name when the
// run's configurations ran on different hosts; rows are in scenario order.
func addHostColumn(t *table, run *results.Run) {
	labels, differ := scenarioHosts(run)
	if !differ {
		return
	}
	t.Header = slices.Insert(t.Header, 1, "Host")
	for i := range t.Rows {
		t.Rows[i] = slices.Insert(t.Rows[i], 1, labels[i])
	}
}

// hostsMeta is the report's line about the hosts of a merged run: how many
// shards ran where. Nil for a run on one host.
func hostsMeta(run *results.Run) []string {
	if len(run.Shards) == 0 {
		return nil
	}
	var where []string
	for i := range run.Shards {
		sh := &run.Shards[i]
		where = append(where, fmt.Sprintf("%d/%d on %s", sh.Index, sh.Count, hostLabel(&sh.Environment)))
	}
	line := fmt.Sprintf("Merged from %d shards: %s", len(run.Shards), strings.Join(where, "; "))
	if _, differ := scenarioHosts(run); differ {
		line += ". The hosts differ: the host above is the first shard's, the summary names each configuration's"
	}
	return []string{line}
}
