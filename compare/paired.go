package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/results"
)

// pairs returns the measured repetitions of both sides that form pairs:
// the same index on both sides (ab numbers a pair's two repetitions alike),
// in index order. A repetition whose partner failed is left out: its pair
// says nothing about the ratio.
func pairs(bm, nm []*results.Repetition) (bp, np []*results.Repetition) {
	byIndex := make(map[int]*results.Repetition, len(nm))
	for _, r := range nm {
		byIndex[r.Index] = r
	}
	for _, b := range bm {
		if n, ok := byIndex[b.Index]; ok {
			bp, np = append(bp, b), append(np, n)
		}
	}
	return bp, np
}

// pairedVerdict judges a metric from aligned pairs: the interval of the
// ratio new/base at Confidence (signedrank.go), a regression only when the
// whole interval lies past the threshold in the bad direction.
//
// A gated metric is judged only when its interval settles the question
// the threshold T asks. With the interval written in the bad direction
// (a rise of time, a fall of throughput) as [lo, hi]:
//
//   - lo > T: regression established;
//   - hi <= T: no regression established (better, worse within the
//     threshold, or ~);
//   - lo <= T < hi: the interval holds the threshold, so the pairs are
//     consistent both with a change within it and with one beyond it:
//     inconclusive, with about how many more pairs would resolve it.
//
// Identical sides are inconclusive only when the run could not resolve
// the threshold at all (half-width above T); a true change near T is
// inconclusive until the pairs place it on one side.
func pairedVerdict(m *MetricResult, base, cur []float64) {
	m.Paired = true
	m.Base, m.New = rangeSummary(base), rangeSummary(cur)
	d := make([]float64, len(base))
	for i := range base {
		if !(base[i] > 0 && cur[i] > 0) {
			m.Verdict = NoData
			m.Note = "a value is zero: no ratio"
			return
		}
		d[i] = math.Log(cur[i] / base[i])
	}
	if constant(base, cur) {
		m.Verdict = Same
		return
	}
	est, lo, hi, level, ok := pairedInterval(d, Confidence)
	m.Change = math.Expm1(est)
	if !ok {
		m.Verdict = TooFewSamples
		m.MorePairs = MinPairs - len(d)
		m.Note = fmt.Sprintf("%d pairs: a %.0f%% interval needs at least %d", len(d), 100*Confidence, MinPairs)
		return
	}
	m.Lo, m.Hi, m.Level = math.Expm1(lo), math.Expm1(hi), level
	m.Detectable = (m.Hi - m.Lo) / 2
	// good is the interval in the metric's good direction: positive is
	// better, whichever way the metric improves.
	s := float64(m.Better)
	goodLo, goodHi := math.Min(s*m.Lo, s*m.Hi), math.Max(s*m.Lo, s*m.Hi)
	badLo, badHi := -goodHi, -goodLo
	switch {
	case goodLo > 0:
		m.Verdict = Better
	case badLo > m.Threshold:
		m.Verdict = Regression
	case badHi > m.Threshold:
		m.Verdict, m.Unjudged = Inconclusive, "interval holds the threshold"
		m.MorePairs = morePairs(d, m.Detectable, -s*m.Change, m.Threshold)
		m.Note = fmt.Sprintf("not judged: the interval holds the %s threshold", formatThreshold(m.Threshold))
		if m.MorePairs > 0 {
			m.Note += fmt.Sprintf("; about %d more pairs would likely resolve it", m.MorePairs)
		}
	case goodHi < 0:
		m.Verdict = Worse
	default:
		m.Verdict = Same
	}
}

// morePairs estimates how many more pairs would likely resolve an
// interval of half-width h around the estimate est (both in the bad
// direction) that holds the threshold t, from the pairs' log ratios d. The
// interval stops holding t once its half-width is under the estimate's
// distance to t, with a margin of 1.5 for the estimate's own moves (and at
// least t/10: an estimate at the threshold may need more pairs than any
// run affords).
//
// The half-width is predicted from the ratios' spread (1.4826 MAD, robust
// to the pair a load spike hit) as the Hodges–Lehmann estimate's large-
// sample interval, 1.96 x 1.023 x spread / sqrt(pairs), not by shrinking
// the interval seen so far as 1/sqrt(pairs): at 6-10 pairs the signed-rank
// interval is far wider than that law says (its critical count is 0-8 of
// 21-55 Walsh averages), and scaling it overstates the pairs needed
// (scripts/copies/estimates.sh re-judges the committed gate runs;
// docs/ci-workflow.md has by how much). Where the spread predicts the
// interval narrow enough already, one more round (2 pairs) is the
// estimate. 0 when t is 0 (no width is narrow enough) or h already is
// under the target.
func morePairs(d []float64, h, est, t float64) int {
	if !(t > 0) {
		return 0
	}
	target := max(math.Abs(est-t)/1.5, t/10)
	if !(h > target) {
		return 0
	}
	n := len(d)
	// The old law: the interval seen, shrinking as 1/sqrt(pairs); an
	// upper bound on what the spread predicts at these sizes.
	upper := math.Ceil(float64(n) * (h / target) * (h / target))
	need := upper
	if spread := robustSpread(d); spread > 0 {
		// An estimate nearer the threshold than its own standard error
		// will move by about that much as pairs come: the distance to
		// aim for is at least one standard error.
		aim := max(target, 1.023*spread/math.Sqrt(float64(n)))
		need = min(upper, math.Ceil(math.Pow(1.96*1.023*spread/aim, 2)))
	}
	// Round up to an even count (ab adds pairs in ABBA order), at least
	// one round.
	more := max(int(need)-n, 2)
	return more + more%2
}

// robustSpread is 1.4826 times the median absolute deviation of v from its
// median: the standard deviation of a normal sample, unmoved by a few
// outliers.
func robustSpread(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	med := stats.Median(slices.Sorted(slices.Values(v)))
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - med)
	}
	return 1.4826 * stats.Median(slices.Sorted(slices.Values(dev)))
}

// rangeSummary is a side's median and range, the figures ab shows per side
// (the verdict rests on the pairs, not on these).
func rangeSummary(v []float64) *Summary {
	sorted := slices.Sorted(slices.Values(v))
	med := stats.Median(sorted)
	return &Summary{Center: med, Lo: math.Inf(-1), Hi: math.Inf(1), Min: sorted[0], Max: sorted[len(sorted)-1], N: len(v)}
}

// outlierNotes flags, for the headline timed metrics, the repetitions of
// either side whose modified Z-score passes OutlierZ.
func outlierNotes(m *MetricResult, def results.Metric, bm, nm []*results.Repetition) []string {
	if def.Name != results.SecondsPerProof && def.Name != results.PeakRSSBytes {
		return nil
	}
	def = def.Alike(bm, nm)
	var notes []string
	for _, side := range []struct {
		name string
		reps []*results.Repetition
	}{{"base", bm}, {"new", nm}} {
		vals, why := sampleOf(def, side.reps)
		if why != "" {
			continue
		}
		idx, z := outliers(vals)
		for k, i := range idx {
			notes = append(notes, fmt.Sprintf("outlier: %s repetition %d has %s %s (modified Z-score %+.1f, beyond ±%.1f): a load spike or a stall; the verdict rests on ranks, so one outlier moves it little",
				side.name, side.reps[i].Index, m.Metric, m.Unit.Format(vals[i]), z[k], OutlierZ))
		}
	}
	return notes
}

// HardwareDiff lists what differs between the hardware two runs measured:
// CPU model, logical CPU count, GPU models, and the backend of each
// scenario they share. Any of these changes timings by itself.
func HardwareDiff(base, cur *results.Run) []string {
	var diffs []string
	be, ne := &base.Environment, &cur.Environment
	field := func(name string, bv, nv any) {
		if bv != nv {
			diffs = append(diffs, fmt.Sprintf("%s: %v in base, %v in new", name, bv, nv))
		}
	}
	field("cpu_model", quoted(be.CPUModel), quoted(ne.CPUModel))
	field("cpus", be.CPUs, ne.CPUs)
	field("gpus", gpuModels(*be), gpuModels(*ne))
	byName := map[string]*results.Scenario{}
	for i := range cur.Scenarios {
		byName[cur.Scenarios[i].Name] = &cur.Scenarios[i]
	}
	for i := range base.Scenarios {
		b := &base.Scenarios[i]
		if n, ok := byName[b.Name]; ok {
			field(fmt.Sprintf("scenario %q: backend", b.Name), b.Backend, n.Backend)
		}
	}
	return diffs
}

func quoted(s string) string { return fmt.Sprintf("%q", s) }

// gpuModels names the GPUs by model, in index order ("none" without any;
// "unknown" without NVML, which cannot tell).
func gpuModels(env results.Environment) string {
	if !env.NVML {
		return "unknown (NVML absent)"
	}
	if len(env.GPUs) == 0 {
		return "none"
	}
	var names []string
	for _, g := range env.GPUs {
		names = append(names, g.Name)
	}
	return strings.Join(names, ", ")
}

// loadWarnings says when the host was busy during a run's repetitions:
// how many had a load average above the CPU count or more than 5% steal.
func loadWarnings(side string, run *results.Run) []string {
	var high, total int
	var maxLoad, maxSteal float64
	for i := range run.Scenarios {
		for j := range run.Scenarios[i].Repetitions {
			h := run.Scenarios[i].Repetitions[j].HostLoad
			if h == nil {
				continue
			}
			total++
			if h.High(run.Environment.CPUs) {
				high++
			}
			maxLoad, maxSteal = math.Max(maxLoad, h.Load1), math.Max(maxSteal, h.StealFraction)
		}
	}
	if high == 0 {
		return nil
	}
	return []string{fmt.Sprintf("host load high in the %s run: %d of %d repetitions ran with a load average above %d CPUs or over 5%% CPU steal (load up to %.1f, steal up to %.1f%%)",
		side, high, total, run.Environment.CPUs, maxLoad, 100*maxSteal)}
}

// OversubscribedLoad is the load average, per CPU, beyond which ab does not
// gate on wall time: with more than twice as many runnable threads as
// CPUs, a repetition's wall time measures the share of the CPUs the
// scheduler happened to give it more than the code, and that share changes
// from one second to the next, so even adjacent repetitions of identical
// code differ by tens of percent, not symmetrically. CPU time, which counts
// only the work done, still gates.
const OversubscribedLoad = 2.0

// oversubscription says why wall time cannot gate when most measured
// repetitions of either run saw a load average above OversubscribedLoad
// per CPU; "" otherwise.
func oversubscription(runs ...*results.Run) string {
	for _, run := range runs {
		var loads []float64
		for i := range run.Scenarios {
			for j := range run.Scenarios[i].Repetitions {
				if r := &run.Scenarios[i].Repetitions[j]; r.Measured() && r.HostLoad != nil {
					loads = append(loads, r.HostLoad.Load1)
				}
			}
		}
		cpus := run.Environment.CPUs
		if len(loads) == 0 || cpus == 0 {
			continue
		}
		if med := stats.Median(loads); med > OversubscribedLoad*float64(cpus) {
			return fmt.Sprintf("the host was oversubscribed (median load average %.1f on %d CPUs, over %g per CPU)", med, cpus, OversubscribedLoad)
		}
	}
	return ""
}

// quietOnly is the pairs a metric on the host's clock is judged on: those
// whose two repetitions both ran while the host was quiet (neighbours under
// results.QuietOthers of its CPU time, steal under 5%). On a host whose
// neighbours come and go, those pairs can judge wall time while the rest
// measured the neighbours.
type quietOnly struct {
	// measured: every pair's repetitions carry the neighbours' share
	// (documents from before it was measured fall back to the load
	// average: oversubscription).
	measured  bool
	base, cur []*results.Repetition
	of        int // pairs in all
}

// quietMeasured reports whether every measured repetition of the runs
// says how quiet its host was; then quiet pairs, not the load average,
// decide what wall time is judged on.
func quietMeasured(runs ...*results.Run) bool {
	for _, run := range runs {
		for i := range run.Scenarios {
			for j := range run.Scenarios[i].Repetitions {
				r := &run.Scenarios[i].Repetitions[j]
				if _, ok := r.HostLoad.Quiet(); r.Measured() && !ok {
					return false
				}
			}
		}
	}
	return true
}

func quietPairs(bp, np []*results.Repetition) quietOnly {
	q := quietOnly{measured: len(bp) > 0, of: len(bp)}
	for i := range bp {
		bq, bok := bp[i].HostLoad.Quiet()
		nq, nok := np[i].HostLoad.Quiet()
		if !bok || !nok {
			return quietOnly{of: len(bp)}
		}
		if bq && nq {
			q.base, q.cur = append(q.base, bp[i]), append(q.cur, np[i])
		}
	}
	return q
}

func (q quietOnly) note() string {
	return fmt.Sprintf("judged on the %d of %d pairs measured while the host was quiet", len(q.base), q.of)
}

// notQuiet marks a gated metric on the host's clock that too few quiet
// pairs can judge: inconclusive, with about how many more pairs would
// give enough at the quiet share seen so far.
func notQuiet(m *MetricResult, q quietOnly) {
	m.Paired = true
	if m.Base != nil && m.New != nil && m.Base.Center > 0 {
		// The medians' change over every pair, busy ones included: shown,
		// with no interval, and not judged.
		m.Change = m.New.Center/m.Base.Center - 1
	}
	m.Verdict, m.Unjudged = Inconclusive, "host busy"
	m.Note = fmt.Sprintf("not judged: only %d of %d pairs ran while the host was quiet (neighbours under %.0f%% of its CPU time), %d needed",
		len(q.base), q.of, 100*results.QuietOthers, MinPairs)
	if len(q.base) > 0 {
		more := int(math.Ceil(float64(MinPairs-len(q.base)) * float64(q.of) / float64(len(q.base))))
		m.MorePairs = more + more%2
	}
}

// firstPairs is a copy of an ab side's document with its warm-ups and the
// measured repetitions of pairs 1..n alone.
func firstPairs(run *results.Run, n int) *results.Run {
	out := *run
	out.Scenarios = make([]results.Scenario, len(run.Scenarios))
	for i, sc := range run.Scenarios {
		sc.Repetitions = slices.DeleteFunc(slices.Clone(sc.Repetitions), func(r results.Repetition) bool {
			return !r.Warmup && r.Index > n
		})
		out.Scenarios[i] = sc
	}
	return &out
}
