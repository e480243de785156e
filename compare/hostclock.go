package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/provebench/provebench/results"
)

// HostClockPolicy is what a gated metric on the host's clock (wall time;
// the CPU backend's device time) that could not be judged makes of an ab
// verdict, where everything the host's load moves less was judged.
//
// On a runner shared with other jobs, wall time often cannot be judged
// in any budget a team accepts: neighbours leave few quiet pairs, and on
// those the interval narrows slowly. The work's CPU time, the exact
// figures and memory can be: a change in the work the code does shows in
// them. A team chooses whether a verdict that rests on them alone is a
// pass.
type HostClockPolicy int

const (
	// HostClockInconclusive keeps such a metric inconclusive: the outcome
	// is not judged (ab's exit 4), never a pass. compare's stored runs,
	// and the zero Options, take it.
	HostClockInconclusive HostClockPolicy = iota
	// HostClockPasses lets the verdict rest on what could be judged, and
	// says plainly that wall time was not judged and why, when: the
	// configuration's CPU time was judged (no regression, interval inside
	// the threshold), and the host-clock metric's interval over every
	// pair, busy ones included, does not lie wholly in the bad direction
	// (a change that makes the code wait, +20% wall time with the same CPU
	// time, reads worse even through the neighbours' noise and stays
	// inconclusive; identical sides read so in about 2.5% of runs, and
	// are then inconclusive, never failed).
	HostClockPasses
)

// HostClockPolicyNamed parses a policy's name: "pass" or "inconclusive".
func HostClockPolicyNamed(name string) (HostClockPolicy, error) {
	switch name {
	case "pass":
		return HostClockPasses, nil
	case "inconclusive":
		return HostClockInconclusive, nil
	}
	return 0, fmt.Errorf("%q: want pass or inconclusive", name)
}

// allPairsInterval records a host-clock metric's interval over every
// pair, busy ones included (MetricResult.AllPairs).
func allPairsInterval(m *MetricResult, def results.Metric, bp, np []*results.Repetition) {
	bv, bwhy := sampleOf(def, bp)
	nv, nwhy := sampleOf(def, np)
	if bwhy != "" || nwhy != "" || len(bv) != len(nv) {
		return
	}
	d := make([]float64, len(bv))
	for i := range bv {
		if !(bv[i] > 0 && nv[i] > 0) {
			return
		}
		d[i] = math.Log(nv[i] / bv[i])
	}
	if _, lo, hi, _, ok := pairedInterval(d, Confidence); ok {
		m.AllPairs, m.AllPairsOK = [2]float64{math.Expm1(lo), math.Expm1(hi)}, true
	}
}

// worseOnAllPairs reports whether the metric's interval over every pair
// lies wholly in the bad direction: a change that makes the code wait
// (more wall time, the same CPU time) shows so even on a busy host, where
// neighbours only widen the interval.
func (m *MetricResult) worseOnAllPairs() bool {
	if !m.AllPairsOK {
		return false
	}
	s := float64(m.Better)
	return math.Max(s*m.AllPairs[0], s*m.AllPairs[1]) < 0
}

// waiveHostClock applies HostClockPasses to a scenario's metrics: each
// inconclusive gated metric on the host's clock gets its Waived reason
// where the scenario's CPU time was judged and its own estimate does not
// look regressed. It stays inconclusive in its row (not judged is what it
// was); the outcome no longer waits on it.
func waiveHostClock(s *ScenarioResult) {
	cpu := ""
	for i := range s.Metrics {
		m := &s.Metrics[i]
		if def, ok := results.MetricNamed(m.Metric); ok && def.Clock == results.CPUClock && m.Gated() {
			switch m.Verdict {
			case Same, Better, Worse:
				cpu = fmt.Sprintf("%s judged %s", m.Metric, m.changeText())
			}
		}
	}
	if cpu == "" {
		return
	}
	for i := range s.Metrics {
		m := &s.Metrics[i]
		if !m.HostClock || m.Verdict != Inconclusive || !m.AllPairsOK || m.worseOnAllPairs() || m.Unjudged == "too few samples" {
			continue
		}
		m.Waived = fmt.Sprintf("not judged (%s); over every pair, busy ones included, [%s, %s], not worse beyond the noise; the verdict rests on %s, the exact figures and memory (--host-clock-unjudged pass)",
			m.Unjudged, formatChange(m.AllPairs[0]), formatChange(m.AllPairs[1]), cpu)
		m.Note = strings.TrimPrefix(m.Note+"; passed: "+m.Waived, "; ")
	}
}

// WallNotJudged lists the metrics on the host's clock that were not judged
// and that the outcome does not wait on (HostClockPasses).
func (r *Report) WallNotJudged() []UnjudgedMetric {
	var out []UnjudgedMetric
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		for j := range s.Metrics {
			if s.Metrics[j].Waived != "" {
				out = append(out, UnjudgedMetric{Scenario: s.Name, MetricResult: &s.Metrics[j]})
			}
		}
	}
	return out
}

// describeWallNotJudged is the headline's clause on the waived metrics:
// each once, with why, and where when not everywhere.
func (r *Report) describeWallNotJudged(list []UnjudgedMetric) string {
	var names []string
	why := map[string][]string{}
	where := map[string][]string{}
	for _, u := range list {
		if !slices.Contains(names, u.Metric) {
			names = append(names, u.Metric)
		}
		if !slices.Contains(why[u.Metric], u.Unjudged) {
			why[u.Metric] = append(why[u.Metric], u.Unjudged)
		}
		where[u.Metric] = append(where[u.Metric], u.Scenario)
	}
	var parts []string
	for _, n := range names {
		in := ""
		if len(where[n]) < r.compared() {
			in = " in " + strings.Join(where[n], ", ")
		}
		parts = append(parts, fmt.Sprintf("%s%s (%s)", n, in, strings.Join(why[n], ", ")))
	}
	return "wall time NOT JUDGED, passed on CPU time, exact figures and memory (--host-clock-unjudged pass): " + strings.Join(parts, "; ")
}
