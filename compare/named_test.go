package compare_test

import (
	"testing"

	"github.com/provebench/provebench/compare"
	"github.com/provebench/provebench/results"
)

// Issue 42 case 13: --threshold minor_faults=0% against a baseline that
// does not record minor faults said OK, exit 0: a gate asked for by name
// and not judged must not pass. Metrics gated by default and measured by
// neither run keep "no data".
func TestANamedGateWithoutDataIsNotAPass(t *testing.T) {
	sh := shape{name: "s", strategy: "hold", repeats: 5, pps: 10, noise: 0.01}
	base, cur := makeRun(t, 11, sh), makeRun(t, 12, sh)
	for i := range cur.Scenarios[0].Repetitions {
		cur.Scenarios[0].Repetitions[i].MinorFaults = new(int64(1000))
	}
	th, err := compare.ParseThresholds("minor_faults=0%")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := compare.Compare(base, cur, compare.Options{Thresholds: th})
	if err != nil {
		t.Fatal(err)
	}
	if m := metric(t, rep, "s", results.MinorFaults); m.Verdict != compare.Inconclusive {
		t.Errorf("minor_faults gated by name, absent in the baseline: verdict %s (%s), want inconclusive", m.Verdict, m.Note)
	}
	if out := rep.Outcome(); out != compare.NotJudged {
		t.Errorf("outcome %v, want not judged", out)
	}
	rep, err = compare.Compare(base, cur, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := metric(t, rep, "s", results.PeakGPUMemoryBytes); m.Verdict != compare.NoData {
		t.Errorf("a GPU figure gated by default, measured by neither run: %s, want no data", m.Verdict)
	}
}
