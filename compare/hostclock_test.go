package compare

import (
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// TestHostClockPolicy: with a neighbour that leaves too few quiet pairs,
// identical sides are not judged on wall time; HostClockPasses lets the
// verdict rest on CPU time (judged) and says wall time was not judged and
// why, while a wall-only slowdown, whose estimate reads past the
// threshold, stays inconclusive. CPU time that is itself not judged waives
// nothing, and the default keeps every such metric inconclusive.
func TestHostClockPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shift  float64
		policy HostClockPolicy
		want   Outcome
	}{
		{"identical, the default", 1, HostClockInconclusive, NotJudged},
		{"identical, pass", 1, HostClockPasses, Pass},
		{"25% slower wall time only, pass", 1.25, HostClockPasses, NotJudged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cur := neighbourSides(16, 4, tc.shift, 7)
			rep, err := Compare(base, cur, Options{Paired: true, HostClock: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Outcome(); got != tc.want {
				t.Fatalf("outcome %v, want %v", got, tc.want)
			}
			m := rep.Scenario("s").Metric(results.SecondsPerProof)
			if m.Verdict != Inconclusive || m.Unjudged != "host busy" {
				t.Fatalf("seconds_per_proof %s (%s): want not judged, host busy", m.Verdict, m.Unjudged)
			}
			_, _, head := rep.headline()
			waived := tc.want == Pass
			if (m.Waived != "") != waived || strings.Contains(head, "wall time NOT JUDGED") != waived {
				t.Fatalf("waived %q, headline %q", m.Waived, head)
			}
			if waived && !strings.Contains(m.Waived, "cpu_seconds judged") {
				t.Errorf("waiver %q does not say what the verdict rests on", m.Waived)
			}
		})
	}
	// CPU time not judged (too noisy for 16 pairs): nothing to rest on.
	base, cur := neighbourSides(16, 4, 1, 7)
	for side, run := range []*results.Run{base, cur} {
		for i := range run.Scenarios[0].Repetitions {
			cpu := 1 + 0.3*float64((i+side)%3)
			run.Scenarios[0].Repetitions[i].RunCPUSeconds = &cpu
		}
	}
	rep, err := Compare(base, cur, Options{Paired: true, HostClock: HostClockPasses})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome() != NotJudged || len(rep.WallNotJudged()) != 0 {
		t.Fatalf("CPU time not judged: outcome %v, waived %d", rep.Outcome(), len(rep.WallNotJudged()))
	}
}
