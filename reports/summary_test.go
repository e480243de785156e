package reports

import (
	"testing"

	"github.com/provebench/provebench/bench/results"
)

// Issue 20: a pacer run whose steady state one repetition was too short to
// tell still reports the steady busy of the other four, not n/a.
func TestSteadyBusyOverTheRepetitionsThatHaveIt(t *testing.T) {
	frac := func(v float64) *float64 { return &v }
	sc := &results.Scenario{Name: "pacer", Repetitions: []results.Repetition{
		{Index: 1, Warmup: true, Status: results.StatusOK},
		{Index: 1, Status: results.StatusOK, SteadyDeviceBusyFraction: frac(0.62)},
		{Index: 2, Status: results.StatusOK, SteadyDeviceBusyFraction: frac(0.70)},
		{Index: 3, Status: results.StatusOK},
		{Index: 4, Status: results.StatusOK, SteadyDeviceBusyFraction: frac(0.66)},
		{Index: 5, Status: results.StatusOK, SteadyDeviceBusyFraction: frac(0.64)},
	}}
	s := summarize(sc)
	if s.steadyBusy.N != 4 || s.steadyBusy.Min != 0.62 || s.steadyBusy.Max != 0.70 {
		t.Fatalf("steady busy %+v, want the spread of 4 repetitions", s.steadyBusy)
	}
	if got := fmtSpread(s.steadyBusy, kindPercent); got != "65% (62–70)" {
		t.Errorf("steady busy reads %q, want 65%% (62–70)", got)
	}
	none := summarize(&results.Scenario{Name: "short", Repetitions: []results.Repetition{{Index: 1, Status: results.StatusOK}}})
	if got := fmtSpread(none.steadyBusy, kindPercent); got != "n/a" {
		t.Errorf("without any steady figure: %q, want n/a", got)
	}
}
