package compare_test

import (
	"slices"
	"testing"

	"github.com/provebench/provebench/compare"
)

// Issue 13, item 9: a new run that lacks a configuration of the baseline
// says so (the command fails on it; see cmd/provebench).
func TestMissingScenariosListed(t *testing.T) {
	a := shape{name: "a", strategy: "hold", repeats: 5, pps: 10, noise: 0.01}
	b := shape{name: "b", strategy: "release", repeats: 5, pps: 10, noise: 0.01}
	rep := mustCompare(t, makeRun(t, 1, a, b), makeRun(t, 2, a))
	if got := rep.MissingScenarios(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("missing %v, want [b]", got)
	}
	if got := mustCompare(t, makeRun(t, 1, a), makeRun(t, 2, a, b)).MissingScenarios(); len(got) != 0 {
		t.Fatalf("an added scenario listed as missing: %v", got)
	}
}

// Issue 13, item 3: names are scoped by file. A run of two files qualifies
// the names they share (ci:release); it pairs with a run of ci.yaml alone
// by file and name, and never pairs quickstart's release with ci's.
func TestScopedNamesPair(t *testing.T) {
	s := func(name string) shape { return shape{name: name, strategy: "hold", repeats: 5, pps: 10, noise: 0.01} }
	base := makeRun(t, 1, s("release"), s("hold"))
	for i := range base.Scenarios {
		base.Scenarios[i].File = "ci"
	}
	cur := makeRun(t, 2, s("quickstart:release"), s("ci:release"), s("ci:hold"))
	cur.Scenarios[0].File, cur.Scenarios[1].File, cur.Scenarios[2].File = "quickstart", "ci", "ci"
	rep := mustCompare(t, base, cur)
	if m := rep.MissingScenarios(); len(m) != 0 {
		t.Fatalf("missing %v", m)
	}
	if len(rep.Scenarios) != 3 {
		t.Fatalf("%d scenarios in the report, want 3", len(rep.Scenarios))
	}
	for _, sc := range rep.Scenarios {
		want := compare.Added
		if sc.Name != "quickstart:release" {
			want = sc.Verdict // compared: any verdict but added or missing
			if want == compare.Added || want == compare.Missing {
				t.Errorf("%s: %s, want it compared", sc.Name, sc.Verdict)
			}
		}
		if sc.Verdict != want {
			t.Errorf("%s: verdict %s, want %s", sc.Name, sc.Verdict, want)
		}
	}
	// Documents from before scoping pair by name as before.
	old := makeRun(t, 3, s("release"), s("hold"))
	if m := mustCompare(t, old, makeRun(t, 4, s("release"), s("hold"))).MissingScenarios(); len(m) != 0 {
		t.Fatalf("unscoped documents: missing %v", m)
	}
}

// provebench ab pairs the configurations its sides share by name, and the
// sides may come from different scenario files (release in base.yaml
// against hold in new.yaml): a paired comparison pairs by name, where
// stored runs of different files share nothing.
func TestPairedSidesOfDifferentFilesPairByName(t *testing.T) {
	s := func(name string) shape { return shape{name: name, strategy: "hold", repeats: 10, pps: 10, noise: 0.01} }
	base, cur := makeRun(t, 1, s("hold-cost"), s("hold-fix")), makeRun(t, 2, s("hold-cost"), s("hold-fix"))
	for i := range base.Scenarios {
		base.Scenarios[i].File, cur.Scenarios[i].File = "ab-base", "ab-new"
	}
	rep, err := compare.Compare(base, cur, compare.Options{Paired: true})
	if err != nil {
		t.Fatalf("paired sides of different files: %v", err)
	}
	if len(rep.Scenarios) != len(cur.Scenarios) {
		t.Fatalf("%d scenarios in the report, want %d", len(rep.Scenarios), len(cur.Scenarios))
	}
	for _, sc := range rep.Scenarios {
		if sc.Verdict == compare.Added || sc.Verdict == compare.Missing {
			t.Errorf("%s: %s, want it compared", sc.Name, sc.Verdict)
		}
	}
	if _, err := compare.Compare(base, cur, compare.Options{}); err == nil {
		t.Error("stored runs of different files compared; want no scenario in common")
	}
}
