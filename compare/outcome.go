package compare

import (
	"fmt"
	"slices"
	"strings"
)

// Outcome is what a comparison concludes as a whole, and so what its exit
// status says: the headline is written from it, so the two cannot
// disagree.
type Outcome int

// Outcomes, from the most severe down: a regression outweighs an
// incomplete run, which outweighs a metric not judged.
const (
	// Pass: every gated metric was judged and none regressed.
	Pass Outcome = iota
	// Regressed: a gated metric regressed.
	Regressed
	// Incomplete: the new run lacks some of the baseline's configurations
	// (an interrupted or filtered run), which must not pass a gate by
	// leaving out what it would have failed.
	Incomplete
	// NotJudged: no regression, but a gated metric could not be judged
	// (Inconclusive): a gate that could not look must not pass.
	NotJudged
)

// Outcome returns the comparison's outcome.
func (r *Report) Outcome() Outcome {
	switch {
	case r.Regressed():
		return Regressed
	case len(r.MissingScenarios()) > 0:
		return Incomplete
	case len(r.Unjudged()) > 0:
		return NotJudged
	}
	return Pass
}

// UnjudgedMetric is a gated metric of a scenario that could not be judged.
type UnjudgedMetric struct {
	Scenario string
	*MetricResult
}

// Unjudged lists the inconclusive metrics of every compared scenario.
func (r *Report) Unjudged() []UnjudgedMetric {
	var out []UnjudgedMetric
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		for j := range s.Metrics {
			if s.Metrics[j].Verdict == Inconclusive && s.Metrics[j].Waived == "" {
				out = append(out, UnjudgedMetric{Scenario: s.Name, MetricResult: &s.Metrics[j]})
			}
		}
	}
	return out
}

// MorePairs returns, for each scenario with a metric not judged, about how
// many more pairs would likely resolve it: the most any of its
// inconclusive metrics needs (every one must be judged for a pass), or,
// where some look regressed (estimate past the threshold in the bad
// direction), the fewest those need (one established regression is the
// verdict); 0 when none of them lacks pairs (a host busy for every pair).
// ab --until-resolved reads it.
//
// A scenario with a regression established wants none: its verdict is in,
// and no number of pairs turns a regression into a pass (the outcome, and
// ab's exit status, are the regression's whatever the other metrics say).
func (r *Report) MorePairs() map[string]int {
	more := map[string]int{}
	regressing := map[string]int{} // the fewest pairs a metric that looks regressed wants
	for _, u := range r.Unjudged() {
		if s := r.Scenario(u.Scenario); s != nil && s.Verdict == Regression {
			continue
		}
		more[u.Scenario] = max(more[u.Scenario], u.MorePairs)
		if u.MorePairs > 0 && u.looksRegressed() {
			if n, ok := regressing[u.Scenario]; !ok || u.MorePairs < n {
				regressing[u.Scenario] = u.MorePairs
			}
		}
	}
	// One regression established settles the verdict: where a metric
	// looks regressed, its pairs are what the verdict needs, not those of
	// the metrics that look fine.
	for name, n := range regressing {
		more[name] = n
	}
	return more
}

// ToName returns, for each scenario whose regression is established,
// about how many more pairs would judge its other metrics that look
// regressed too: inconclusive, with the estimate of the change already
// past the threshold in the bad direction (a synthesis slowdown whose CPU
// time was judged first while its seconds per proof, its estimate past the
// threshold, still had an interval that held it; docs/ci-workflow.md has
// the run). The verdict is in; these pairs only let it
// name every metric that regressed, so a caller bounds what it spends on
// them (ab --until-resolved: as many pairs again, at most). A metric
// whose estimate is within its threshold wants none: more pairs would
// most likely clear it, which the verdict does not need.
func (r *Report) ToName() map[string]int {
	more := map[string]int{}
	for _, u := range r.Unjudged() {
		s := r.Scenario(u.Scenario)
		if s == nil || s.Verdict != Regression || u.MorePairs <= 0 || !u.looksRegressed() {
			continue
		}
		more[u.Scenario] = max(more[u.Scenario], u.MorePairs)
	}
	return more
}

// looksRegressed reports whether the metric's estimate of the change is
// past its threshold in the bad direction.
func (m *MetricResult) looksRegressed() bool {
	return m.Gated() && -float64(m.Better)*m.Change > m.Threshold
}

// describeUnjudged is the headline's list: each inconclusive metric once,
// with why, and the scenarios where it happened when not all.
func (r *Report) describeUnjudged(list []UnjudgedMetric) string {
	type entry struct {
		why       []string
		scenarios []string
		more      int
	}
	var order []string
	byMetric := map[string]*entry{}
	for _, u := range list {
		e := byMetric[u.Metric]
		if e == nil {
			e = &entry{}
			byMetric[u.Metric] = e
			order = append(order, u.Metric)
		}
		if !slices.Contains(e.why, u.Unjudged) {
			e.why = append(e.why, u.Unjudged)
		}
		e.scenarios = append(e.scenarios, u.Scenario)
		e.more = max(e.more, u.MorePairs)
	}
	var parts []string
	for _, name := range order {
		e := byMetric[name]
		why := strings.Join(e.why, ", ")
		if e.more > 0 {
			why += fmt.Sprintf("; about %d more pairs would likely resolve it", e.more)
		}
		where := ""
		if len(e.scenarios) < r.compared() {
			where = " in " + strings.Join(e.scenarios, ", ")
		}
		parts = append(parts, fmt.Sprintf("%s%s (%s)", name, where, why))
	}
	return strings.Join(parts, "; ")
}

// compared counts the scenarios present on both sides.
func (r *Report) compared() int {
	n := 0
	for i := range r.Scenarios {
		if v := r.Scenarios[i].Verdict; v != Missing && v != Added {
			n++
		}
	}
	return n
}

// missingText lists the configurations the new run lacks, saying when the
// new run has one whose name differs only in case (Hold against hold):
// names pair exactly, so that is a rename to undo, not a missing run.
func (r *Report) missingText(missing []string) string {
	var parts []string
	for _, name := range missing {
		hint := ""
		for i := range r.Scenarios {
			if s := &r.Scenarios[i]; s.Verdict == Added && s.Name != name && strings.EqualFold(s.Name, name) {
				hint = fmt.Sprintf(" (the new run has %q: names pair exactly, and these differ only in case)", s.Name)
			}
		}
		parts = append(parts, fmt.Sprintf("%q%s", name, hint))
	}
	return strings.Join(parts, ", ")
}
