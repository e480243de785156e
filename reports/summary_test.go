package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
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

func TestSummaryDeviceColumnsOnlyWherePresent(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rep := func(dev, setup, joules *float64) results.Repetition {
		return results.Repetition{Index: 1, Status: results.StatusOK, PartitionsPerSecond: 1, SecondsPerProof: 2,
			DeviceSecondsPerPartition: dev, SetupSeconds: setup, JoulesPerProof: joules}
	}
	gpu := &results.Scenario{Name: "gpu", Strategy: "hold", Repetitions: []results.Repetition{rep(f(0.355), f(2.5), nil)}}
	exec := &results.Scenario{Name: "exec", Strategy: "exec", Repetitions: []results.Repetition{rep(nil, nil, nil)}}
	run := &results.Run{Scenarios: []results.Scenario{*gpu, *exec}}

	sec := summarySection(run, []*scenarioSummary{summarize(gpu), summarize(exec)})
	h := sec.Table.Header
	i := slices.Index(h, "device s/partition")
	if i != slices.Index(h, "s/proof")+1 || slices.Index(h, "setup s") != i+1 || slices.Contains(h, "J/proof") {
		t.Fatalf("header %q: want device s/partition and setup s after s/proof, no J/proof (no repetition has it)", h)
	}
	if got := sec.Table.Rows[0][i]; !strings.HasPrefix(got, "355") {
		t.Errorf("gpu device cell %q", got)
	}
	if got := sec.Table.Rows[1][i]; got != "n/a" {
		t.Errorf("exec device cell %q, want n/a (absent, not 0)", got)
	}
	if !strings.Contains(strings.Join(sec.Text, " "), "Device s/partition is") {
		t.Errorf("the columns are not explained: %q", sec.Text)
	}

	// A run without any of the figures has none of the columns.
	sec = summarySection(&results.Run{Scenarios: []results.Scenario{*exec}}, []*scenarioSummary{summarize(exec)})
	for _, c := range []string{"device s/partition", "setup s", "J/proof"} {
		if slices.Contains(sec.Table.Header, c) {
			t.Errorf("column %q without any figure", c)
		}
	}
}
