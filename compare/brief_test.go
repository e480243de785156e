package compare_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/provebench/provebench/compare"
)

// Issue 41, item 4: ab's terminal output for 4 configurations ran to 363
// lines; the brief holds the headline, the sides and only the rows that
// decide the verdict, at most ~40 lines, and names the full report.
func TestBriefFitsATerminal(t *testing.T) {
	shapes := []shape{
		{name: "release", strategy: "release", repeats: 10, pps: 2, noise: 0.03, varyingPeak: true},
		{name: "hold", strategy: "hold", repeats: 10, pps: 2, noise: 0.03, varyingPeak: true},
		{name: "budget", strategy: "budget", repeats: 10, pps: 2, noise: 0.03, varyingPeak: true},
		{name: "pacer", strategy: "pacer", repeats: 10, pps: 2, noise: 0.03, varyingPeak: true},
	}
	rep, err := compare.Compare(makeRun(t, 1, shapes...), makeRun(t, 2, shapes...), compare.Options{Paired: true})
	if err != nil {
		t.Fatal(err)
	}
	var brief, full bytes.Buffer
	if err := rep.WriteBrief(&brief, "out/ab/ab.md"); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteText(&full); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(brief.String(), "\n")
	if lines > 40 {
		t.Errorf("the brief of 4 configurations is %d lines:\n%s", lines, brief.String())
	}
	if !strings.Contains(brief.String(), "out/ab/ab.md") || !strings.HasPrefix(brief.String(), "provebench ab: ") {
		t.Errorf("the brief lacks its headline or the full report's name:\n%s", brief.String())
	}
	for _, name := range []string{"release", "hold", "budget", "pacer"} {
		if !strings.Contains(brief.String(), name) {
			t.Errorf("the brief does not name %s", name)
		}
	}
	t.Logf("brief %d lines, full text %d lines", lines, strings.Count(full.String(), "\n"))
}

// Issue 41, item 4: "worse" and "better" only for a gated metric past its
// threshold; an ungated metric's significant change reads "~".
func TestWorseOnlyPastAGatedThreshold(t *testing.T) {
	shapes := []shape{{name: "hold", strategy: "hold", repeats: 10, pps: 2, noise: 0.01}}
	base, cur := makeRun(t, 1, shapes...), makeRun(t, 1, shapes...)
	for i := range cur.Scenarios[0].Repetitions {
		r := &cur.Scenarios[0].Repetitions[i]
		r.PeakRSSBytes = uint64(float64(r.PeakRSSBytes) * 1.02) // +2%: significant, within 10%
	}
	rep, err := compare.Compare(base, cur, compare.Options{GateTimed: true})
	if err != nil {
		t.Fatal(err)
	}
	m := metric(t, rep, "hold", "peak_rss_bytes")
	if m.Verdict != compare.Worse || math.Abs(m.Change) > m.Threshold {
		t.Skipf("the fixture's +2%% reads %s (change %.3f, threshold %.3f): not the case this test is for", m.Verdict, m.Change, m.Threshold)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if strings.Contains(l, "peak_rss_bytes") && strings.Contains(l, "worse") {
			t.Errorf("a +2%% peak RSS, within its 10%% threshold, labelled worse: %q", l)
		}
	}
}
