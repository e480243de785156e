package results

import (
	"strings"
	"testing"
)

func loadRun(shares ...[]float64) *Run {
	run := &Run{}
	for i, s := range shares {
		sc := Scenario{Name: string(rune('a' + i))}
		sc.Repetitions = append(sc.Repetitions, Repetition{Warmup: true, Status: StatusOK,
			HostLoad: &HostLoad{OthersCPUFraction: ptrTo(0.99)}})
		for _, v := range s {
			sc.Repetitions = append(sc.Repetitions, Repetition{Status: StatusOK, HostLoad: &HostLoad{OthersCPUFraction: ptrTo(v)}})
		}
		run.Scenarios = append(run.Scenarios, sc)
	}
	return run
}

func ptrTo(v float64) *float64 { return &v }

func TestLoadSkews(t *testing.T) {
	// The case: one configuration measured while neighbours took
	// half the machine, the others while they took little.
	got := LoadSkews(loadRun([]float64{0.45, 0.52, 0.69}, []float64{0, 0.05, 0.21}, []float64{0.02, 0.08, 0.1}))
	if len(got) != 1 || got[0].Scenario != "a" || got[0].Others != 0.52 || got[0].Min != 0.45 || got[0].Max != 0.69 {
		t.Fatalf("skews %+v, want a at 52%% (45-69%%)", got)
	}
	if got[0].Rest != 0.065 {
		t.Fatalf("rest %v, want the median of the others' medians 0.065 (warm-ups left out)", got[0].Rest)
	}
	if s := got[0].String(); !strings.Contains(s, "52% (45–69%)") || !strings.Contains(s, "6%") {
		t.Fatalf("text %q", s)
	}
	// Within the margin: none.
	if got := LoadSkews(loadRun([]float64{0.1, 0.15}, []float64{0.05, 0.1})); len(got) != 0 {
		t.Fatalf("skews %+v within the margin", got)
	}
	// One configuration, or no recorded shares: nothing to compare.
	if got := LoadSkews(loadRun([]float64{0.9})); got != nil {
		t.Fatalf("one configuration: %+v", got)
	}
	if got := LoadSkews(loadRun([]float64{0.9}, nil)); got != nil {
		t.Fatalf("the other without shares: %+v", got)
	}
}

func TestLoadSkewsOfTwo(t *testing.T) {
	// Two configurations that differ: neither is the reference, both are
	// flagged.
	if got := LoadSkews(loadRun([]float64{0.15}, []float64{0.03})); len(got) != 2 {
		t.Fatalf("skews %+v, want both", got)
	}
}
