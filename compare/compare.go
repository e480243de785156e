// Package compare decides whether a run regressed against a baseline, per
// scenario and metric, in one of two settings:
//
//   - Stored runs (compare): two results documents measured at different
//     times, perhaps on different machines of one type. Only what is exact
//     gates by default: failed repetitions, failed partitions, unverified
//     proofs, counters that do not end at zero, and counter peaks that
//     repeat exactly (the strategies' bounds). Timed and sampled figures
//     are reported with the change of the median and the Mann-Whitney U
//     test (benchstat's, through golang.org/x/perf/benchmath), and gate
//     only with Options.GateTimed: between runs minutes or days apart the
//     machine's load differs as much as the code, and a timed gate there
//     flags identical code.
//   - Paired runs (ab): the two sides of one interleaved run, repetitions
//     of the same index run back to back on one machine. Timed figures are
//     compared by the ratio new/base with a confidence interval from the
//     pairs (signedrank.go) and gate: a regression only when the whole
//     interval lies past the threshold in the bad direction.
//
// Either way exact figures are compared directly (any increase beyond the
// threshold, 0 by default, is a regression), a change the statistics cannot
// tell from noise is reported as ~, and runs from different hardware are
// refused unless Options.AllowDifferentHardware says otherwise.
package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/provebench/provebench/gpu/catalog"
	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/results"
)

// Confidence is the level of the median's confidence interval reported
// for each side.
const Confidence = 0.95

// DefaultAlpha is the significance level of the Mann-Whitney U test.
const DefaultAlpha = 0.05

// ErrMismatch marks inputs that cannot be compared: no scenario in common,
// or a scenario whose configuration differs between the two runs.
var ErrMismatch = errors.New("results cannot be compared")

// ErrHardware marks runs measured on different hardware (CPU model, CPU
// count, GPU models) or on different backends: their timings differ for
// reasons that are not the code's. Options.AllowDifferentHardware lifts it.
var ErrHardware = errors.New("results come from different hardware")

// Options say how to compare. The zero value compares stored runs with the
// default thresholds and alpha.
type Options struct {
	// Thresholds per metric; nil means DefaultThresholds.
	Thresholds Thresholds
	// Alpha is the Mann-Whitney U test's level for stored runs; 0 means
	// DefaultAlpha.
	Alpha float64
	// GateTimed gates timed and sampled figures of stored runs with their
	// thresholds; by default they are reported and not gated.
	GateTimed bool
	// AllowDifferentHardware compares runs whose CPU model, CPU count or
	// GPU models, or scenarios whose backend, differ; by default Compare
	// refuses them with ErrHardware.
	AllowDifferentHardware bool
	// Paired compares the two sides of an ab run: measured repetitions with
	// the same index form a pair, timed figures are judged by their paired
	// ratios and gated. Configurations may differ between the sides (that
	// can be what is compared), so they are not checked.
	Paired bool
	// FirstPairs, with Paired and above 0, judges only the warm-ups and
	// pairs 1..FirstPairs: what ab concluded, or would have, after that
	// many pairs.
	FirstPairs int
	// HostClock is what a gated metric on the host's clock that could not
	// be judged makes of a paired verdict (see HostClockPolicy); the zero
	// value keeps it inconclusive.
	HostClock HostClockPolicy
}

// Verdict is the outcome for a metric or a scenario.
type Verdict string

// Verdicts, from a metric's point of view. A scenario's verdict is the most
// severe of its metrics' (regression, worse, better, too few samples, ~,
// no data), or missing/new for a scenario on one side only.
const (
	Regression    Verdict = "regression"      // significantly worse, beyond the threshold
	Worse         Verdict = "worse"           // significantly worse, within the threshold or not gated
	Better        Verdict = "better"          // significantly better
	TooFewSamples Verdict = "too few samples" // not significant, and could not have been
	// Inconclusive is a gated metric that could not be judged: its clock
	// was disturbed (wall time on an oversubscribed host), its samples too
	// few for the test, or its interval holds the threshold, so that
	// neither "no regression" nor "regression" is established. It fails
	// the gate as its own outcome (never a pass): see Report.Outcome.
	Inconclusive Verdict = "inconclusive"
	Same         Verdict = "~"       // no significant change: the difference is inside the noise
	NoData       Verdict = "no data" // the figure is absent on a side
	Missing      Verdict = "missing" // scenario in the baseline, absent from the new run
	Added        Verdict = "new"     // scenario in the new run only
)

var severity = map[Verdict]int{NoData: 0, Same: 1, TooFewSamples: 2, Better: 3, Worse: 4, Inconclusive: 5, Regression: 6}

// Summary is one side's figure for a metric. For a sampled metric, Center
// is the median over N measured repetitions, [Lo, Hi] its confidence
// interval at Confidence (infinite with too few repetitions: fewer than 6
// at 95%) and [Min, Max] the range of the repetitions. For an exact metric
// all are the figure.
type Summary struct {
	Center, Lo, Hi float64
	Min, Max       float64
	N              int
}

// MetricResult is the comparison of one metric of one scenario.
type MetricResult struct {
	Metric string
	Unit   results.Unit
	Better results.Direction
	// Exact metrics are compared directly, without a test.
	Exact bool
	// Base and New are nil when the figure is absent on that side.
	Base, New *Summary
	// Change is the relative change of the centres, new/base - 1 (±Inf from
	// a zero base); 0 when either side is absent.
	Change float64
	// P is the Mann-Whitney U p-value (1 when not computed: exact metrics,
	// identical samples, absent figures).
	P float64
	// Threshold is the metric's regression threshold, +Inf when not gated.
	Threshold float64
	// Paired metrics (ab) are judged by the interval [Lo, Hi] of the
	// relative change new/base - 1 at confidence Level, from the pairs'
	// ratios; Change is then the Hodges–Lehmann estimate. Detectable is
	// the interval's half-width: the smallest change this run could tell
	// from noise.
	Paired        bool
	Lo, Hi, Level float64
	Detectable    float64
	Verdict       Verdict
	// MorePairs is, for an inconclusive paired metric whose interval is
	// too wide, about how many more pairs would likely resolve it (from
	// the observed spread); 0 when more pairs are not what it lacks.
	MorePairs int
	// Unjudged is, for an inconclusive metric, why in a few words.
	Unjudged string
	// Note explains the verdict where it needs it (too few samples, n/a).
	Note string
	// HostClock: the metric is read on the host's clock (wall time, the
	// CPU backend's device time), which neighbours move.
	HostClock bool
	// AllPairs, for a paired metric on the host's clock, is the interval
	// of its change over every pair, busy ones included (AllPairsOK when
	// computed): not a verdict (neighbours moved it), but the sign a
	// change that makes the code wait leaves even on a busy host.
	AllPairs   [2]float64
	AllPairsOK bool
	// Waived, for an inconclusive metric on the host's clock, says why
	// the outcome does not wait on it (Options.HostClock
	// HostClockPasses); empty otherwise.
	Waived string
}

// Gated reports whether the metric can fail the comparison.
func (m *MetricResult) Gated() bool { return !math.IsInf(m.Threshold, 1) }

// Significant reports whether the change passed the test (or, for an exact
// metric, whether the figures differ).
func (m *MetricResult) Significant() bool {
	switch m.Verdict {
	case Regression, Worse, Better:
		return true
	}
	return false
}

// ScenarioResult is the comparison of one scenario.
type ScenarioResult struct {
	Name     string
	Strategy string
	Backend  string
	Verdict  Verdict
	// BaseStatus and NewStatus count repetitions by status ("9 ok, 1 failed").
	BaseStatus, NewStatus string
	Metrics               []MetricResult
	// Notes are facts a reader needs alongside the metrics, such as a
	// baseline whose counters did not end at zero.
	Notes []string
}

// Regressions returns the scenario's regressed metrics.
func (s *ScenarioResult) Regressions() []*MetricResult {
	var out []*MetricResult
	for i := range s.Metrics {
		if s.Metrics[i].Verdict == Regression {
			out = append(out, &s.Metrics[i])
		}
	}
	return out
}

// Metric returns the named metric's result, or nil.
func (s *ScenarioResult) Metric(name string) *MetricResult {
	for i := range s.Metrics {
		if s.Metrics[i].Metric == name {
			return &s.Metrics[i]
		}
	}
	return nil
}

// RunInfo identifies a side of the comparison.
type RunInfo struct {
	ToolVersion string
	GitCommit   string
	Host        string
	CPU         string
	GPUs        string
	StartedAt   time.Time
	Complete    bool
}

// Report is the outcome of Compare.
type Report struct {
	Base, New  RunInfo
	Alpha      float64
	Thresholds Thresholds
	// Paired is set for the two sides of an ab run (see Options.Paired);
	// GateTimed when stored runs' timed figures were gated on request.
	Paired, GateTimed bool
	// Scenarios are in the baseline's order; scenarios of the new run
	// alone follow, with verdict Added.
	Scenarios []ScenarioResult
	// Warnings concern the comparison as a whole: different hosts,
	// incomplete runs.
	Warnings []string
	// Cost, set by ab, says what the verdict cost and how each side ran:
	// it follows the headline, so the first lines say both what was
	// decided and what deciding it took.
	Cost []string
}

// Regressed reports whether any metric of any scenario regressed.
func (r *Report) Regressed() bool {
	for i := range r.Scenarios {
		if r.Scenarios[i].Verdict == Regression {
			return true
		}
	}
	return false
}

// Scenario returns the named scenario's result, or nil.
func (r *Report) Scenario(name string) *ScenarioResult {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}

// Compare compares the new run cur against the baseline base as opts say.
// It fails, wrapping ErrMismatch, when the runs have no scenario in common
// or (stored runs) a common scenario's configuration differs: a stale
// baseline must be refreshed, not compared; and, wrapping ErrHardware, when
// the runs' hardware differs and opts do not allow it.
func Compare(base, cur *results.Run, opts Options) (*Report, error) {
	if base == nil || cur == nil {
		return nil, errors.New("compare: nil results")
	}
	if opts.Paired && opts.FirstPairs > 0 {
		base, cur = firstPairs(base, opts.FirstPairs), firstPairs(cur, opts.FirstPairs)
	}
	th, alpha, err := thresholdsAndAlpha(opts)
	if err != nil {
		return nil, err
	}
	key := matchKey(base, cur, opts.Paired)
	baseIdx, err := index(base, "base", key)
	if err != nil {
		return nil, err
	}
	curIdx, err := index(cur, "new", key)
	if err != nil {
		return nil, err
	}
	if err := checkComparable(base, cur, curIdx, key, opts); err != nil {
		return nil, err
	}
	rep := newReport(base, cur, th, alpha, opts)
	c := &comparer{th: th, bt: &benchmath.Thresholds{CompareAlpha: alpha}, opts: opts}
	if opts.Paired {
		if c.oversubscribed = hostOversubscribed(base, cur); c.oversubscribed != "" {
			rep.Warnings = append(rep.Warnings, c.oversubscribed+": wall time (seconds_per_proof, partitions_per_second), and the CPU backend's device time, "+
				"are not judged (inconclusive); cpu_seconds, a GPU's device time and the exact figures still gate")
		}
	}
	rep.Scenarios = c.scenarios(base, cur, baseIdx, curIdx, key)
	return rep, nil
}

// thresholdsAndAlpha are the thresholds and the test's level opts ask for,
// the defaults where they leave them out.
func thresholdsAndAlpha(opts Options) (Thresholds, float64, error) {
	th := opts.Thresholds
	if th == nil {
		th = DefaultThresholds()
	}
	alpha := opts.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, 0, fmt.Errorf("compare: alpha %v: want a level between 0 and 1, such as 0.05", alpha)
	}
	return th, alpha, nil
}

// newReport is the report of the two runs before any scenario is
// compared: the sides, the rule, and the warnings about the comparison
// as a whole.
func newReport(base, cur *results.Run, th Thresholds, alpha float64, opts Options) *Report {
	rep := &Report{
		Base: runInfo(base), New: runInfo(cur),
		Alpha: alpha, Thresholds: th, Paired: opts.Paired, GateTimed: opts.GateTimed && !opts.Paired,
		Warnings: environmentWarnings(base, cur),
	}
	if rep.GateTimed {
		rep.Warnings = append(rep.Warnings, gateTimedRisk)
	}
	rep.Warnings = append(rep.Warnings, loadWarnings("base", base)...)
	rep.Warnings = append(rep.Warnings, loadWarnings("new", cur)...)
	return rep
}

// hostOversubscribed says why the host's clock of an ab run cannot be
// judged: the host was oversubscribed and the pairs do not say which were
// measured while it was quiet. It is empty when the clock can be judged.
func hostOversubscribed(base, cur *results.Run) string {
	if why := oversubscription(base, cur); why != "" && !quietMeasured(base, cur) {
		return why
	}
	return ""
}

// scenarios compares the scenarios the runs have in common, in the
// baseline's order, with the baseline's alone among them as missing; the
// new run's alone follow, as new.
func (c *comparer) scenarios(base, cur *results.Run, baseIdx, curIdx map[string]*results.Scenario, key func(*results.Scenario) string) []ScenarioResult {
	var out []ScenarioResult
	for i := range base.Scenarios {
		bsc := &base.Scenarios[i]
		nsc, ok := curIdx[key(bsc)]
		if !ok {
			out = append(out, ScenarioResult{
				Name: bsc.Name, Strategy: bsc.Strategy, Backend: bsc.Backend, Verdict: Missing,
				BaseStatus: statusCounts(bsc),
			})
			continue
		}
		out = append(out, c.scenario(bsc, nsc))
	}
	for i := range cur.Scenarios {
		nsc := &cur.Scenarios[i]
		if _, ok := baseIdx[key(nsc)]; !ok {
			out = append(out, ScenarioResult{
				Name: nsc.Name, Strategy: nsc.Strategy, Backend: nsc.Backend, Verdict: Added,
				NewStatus: statusCounts(nsc),
			})
		}
	}
	return out
}

// gateTimedRisk is printed whenever stored runs' timed figures gate.
const gateTimedRisk = "timed figures gate across stored runs (--gate-timed): the two runs were measured at different times, " +
	"and a shared machine's load changes between them as much as code does; a regression here may be the machine's. " +
	"provebench ab measures both sides interleaved on one machine instead"

// checkComparable refuses runs without a scenario in common, stale
// baselines (stored runs whose configurations differ) and runs from
// different hardware.
func checkComparable(base, cur *results.Run, curIdx map[string]*results.Scenario, key func(*results.Scenario) string, opts Options) error {
	var common []string
	var mismatches []string
	for i := range base.Scenarios {
		sc := &base.Scenarios[i]
		if nsc, ok := curIdx[key(sc)]; ok {
			common = append(common, sc.Name)
			if !opts.Paired {
				mismatches = append(mismatches, configDiff(sc, nsc)...)
			}
		}
	}
	if len(common) == 0 {
		return fmt.Errorf("%w: no scenario in common (base has %s; new has %s): is the baseline from another scenario file?",
			ErrMismatch, nameList(base), nameList(cur))
	}
	if len(mismatches) > 0 {
		return fmt.Errorf("%w: configurations differ, so the baseline is stale; refresh it from a run of the new configuration:\n  %s",
			ErrMismatch, strings.Join(mismatches, "\n  "))
	}
	if opts.AllowDifferentHardware {
		return nil
	}
	if diffs := HardwareDiff(base, cur); len(diffs) > 0 {
		return fmt.Errorf("%w (pass --allow-different-hardware to compare anyway):\n  %s", ErrHardware, strings.Join(diffs, "\n  "))
	}
	return nil
}

// CompareFiles reads two results documents and compares them. Every error
// names the file at fault: unreadable, not a results document, another
// schema, or (with ErrMismatch) not comparable with the other. Reading
// stops, with ctx's error, when ctx is done.
func CompareFiles(ctx context.Context, basePath, newPath string, opts Options) (*Report, error) {
	base, err := results.ReadContext(ctx, basePath)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	cur, err := results.ReadContext(ctx, newPath)
	if err != nil {
		return nil, fmt.Errorf("new results: %w", err)
	}
	rep, err := Compare(base, cur, opts)
	if err != nil {
		return nil, fmt.Errorf("%s vs %s: %w", basePath, newPath, err)
	}
	return rep, nil
}

func index(run *results.Run, side string, key func(*results.Scenario) string) (map[string]*results.Scenario, error) {
	if len(run.Scenarios) == 0 {
		return nil, fmt.Errorf("%w: the %s run has no scenarios", ErrMismatch, side)
	}
	idx := make(map[string]*results.Scenario, len(run.Scenarios))
	for i := range run.Scenarios {
		sc := &run.Scenarios[i]
		if _, dup := idx[key(sc)]; dup {
			return nil, fmt.Errorf("%w: the %s run has two scenarios named %q", ErrMismatch, side, sc.Name)
		}
		idx[key(sc)] = sc
	}
	return idx, nil
}

// comparer holds what every scenario's comparison shares.
type comparer struct {
	th   Thresholds
	bt   *benchmath.Thresholds
	opts Options
	// oversubscribed, when set, says why metrics on the host's clock
	// cannot be judged (ab on an oversubscribed host).
	oversubscribed string
}

func (c *comparer) scenario(bsc, nsc *results.Scenario) ScenarioResult {
	out := ScenarioResult{
		Name: nsc.Name, Strategy: nsc.Strategy, Backend: nsc.Backend,
		BaseStatus: statusCounts(bsc), NewStatus: statusCounts(nsc),
	}
	bm, nm := bsc.Measured(), nsc.Measured()
	for _, def := range results.MetricsFor(results.Compared) {
		m := MetricResult{Metric: def.Name, Unit: def.Unit, Better: def.Better, P: 1}
		m.Threshold, _ = c.th.For(def.Name)
		if def.Total {
			m.Exact = true
			exactVerdict(&m, total(def, bsc.Repetitions), total(def, nsc.Repetitions))
		} else {
			c.timed(&m, def, bm, nm, nsc.Backend)
			out.Notes = append(out.Notes, outlierNotes(&m, def, bm, nm)...)
		}
		out.Metrics = append(out.Metrics, m)
	}
	out.Metrics = append(out.Metrics, c.counterPeaks(bsc, nsc, bm, nm)...)
	finals, notes := c.finalCounters(bm, nm)
	out.Metrics = append(out.Metrics, finals...)
	out.Notes = append(out.Notes, notes...)
	for i := range out.Metrics {
		tooFewIsInconclusive(&out.Metrics[i])
		c.namedIsJudged(&out.Metrics[i])
	}
	if c.opts.Paired && c.opts.HostClock == HostClockPasses {
		waiveHostClock(&out)
	}
	out.Verdict = scenarioVerdict(out.Metrics)
	if len(nm) == 0 {
		out.Notes = append(out.Notes, "the new run has no measured repetition of this scenario")
	}
	return out
}

// onHostClock reports whether a metric is read on the host's clock, which
// other jobs on the machine slow down: wall time, and device time on the
// CPU backend (there the "device" is the host's CPUs, and its busy time is
// wall time of the prover's calls). A GPU's device time is its own clock.
func onHostClock(def results.Metric, backend string) bool {
	switch def.Clock {
	case results.WallClock:
		return true
	case results.DeviceClock:
		return catalog.OnHost(backend)
	}
	return false
}

// gatesStored reports whether a metric sampled per repetition gates
// between stored runs by default: an exact count, and a GPU's device
// time, whose clock the host's load does not move (the CPU backend's is
// the host's: see onHostClock).
func gatesStored(def results.Metric, backend string) bool {
	return def.Kind == results.Exact || def.Clock == results.DeviceClock && !onHostClock(def, backend)
}

// timed compares a metric sampled per measured repetition: by paired
// ratios in ab, by the U test between stored runs, where a timed figure
// gates only when asked to (or, for a GPU's device time, by default) on
// the scenario's backend.
func (c *comparer) timed(m *MetricResult, def results.Metric, bm, nm []*results.Repetition, backend string) {
	def = def.Alike(bm, nm)
	if c.opts.Paired {
		c.paired(m, def, bm, nm, backend)
		return
	}
	c.stored(m, def, bm, nm, backend)
}

// paired judges a metric of an ab run by its pairs' ratios: on the host's
// clock only the pairs measured while the host was quiet, where that was
// measured, and not at all on an oversubscribed host where it was not.
func (c *comparer) paired(m *MetricResult, def results.Metric, bm, nm []*results.Repetition, backend string) {
	bp, np := pairs(bm, nm)
	if len(bp) == 0 && len(bm) > 0 && len(nm) > 0 {
		noData(m, nil, nil, "no pair with both repetitions measured", "no pair with both repetitions measured")
		return
	}
	hostClock := onHostClock(def, backend)
	m.HostClock = hostClock
	quiet := quietOnly{}
	if hostClock {
		quiet = quietPairs(bp, np)
		allPairsInterval(m, def, bp, np)
	}
	if quiet.measured && len(quiet.base) < MinPairs && m.Gated() {
		// Too few quiet pairs to judge: every pair's figures are shown,
		// and the metric is not judged.
		if bv, nv, ok := samplesOf(m, def, bp, np); ok {
			m.Base, m.New = rangeSummary(bv), rangeSummary(nv)
			notQuiet(m, quiet)
		}
		return
	}
	if quiet.measured {
		bp, np = quiet.base, quiet.cur
	}
	bv, nv, ok := samplesOf(m, def, bp, np)
	if !ok {
		return
	}
	pairedVerdict(m, bv, nv)
	if quiet.measured && quiet.of > len(bp) {
		m.Note = strings.TrimPrefix(m.Note+"; "+quiet.note(), "; ")
	}
	if hostClock && !quiet.measured && c.oversubscribed != "" && m.Gated() {
		// Whatever the interval says, it measured the scheduler's
		// share of the CPUs, not the code: not judged.
		m.Verdict, m.MorePairs, m.Unjudged = Inconclusive, 0, "host oversubscribed"
		m.Note = "not judged: host oversubscribed, so this clock measured the scheduler; rerun where the load average stays under " +
			fmt.Sprintf("%g per CPU", OversubscribedLoad)
	}
}

// stored judges a metric of two stored runs by the U test; one that does
// not gate between stored runs by default (gatesStored) is reported, not
// gated, unless GateTimed asks.
func (c *comparer) stored(m *MetricResult, def results.Metric, bm, nm []*results.Repetition, backend string) {
	bv, nv, ok := samplesOf(m, def, bm, nm)
	if !ok {
		return
	}
	if !c.opts.GateTimed && m.Gated() && !gatesStored(def, backend) {
		m.Threshold = math.Inf(1)
		m.Note = "not gated between stored runs (ab, or --gate-timed)"
		if def.Clock == results.DeviceClock {
			m.Note = "not gated between stored runs on the CPU backend, whose device time is the host's clock (ab, or --gate-timed)"
		}
	}
	sampledVerdict(m, bv, nv, c.bt)
}

// samplesOf reads a metric's figures on both sides; where a side lacks
// them, it says why in m (no data) and returns false.
func samplesOf(m *MetricResult, def results.Metric, base, cur []*results.Repetition) (bv, nv []float64, ok bool) {
	bv, bwhy := sampleOf(def, base)
	nv, nwhy := sampleOf(def, cur)
	if bwhy != "" || nwhy != "" {
		noData(m, bv, nv, bwhy, nwhy)
		return nil, nil, false
	}
	return bv, nv, true
}

// tooFewIsInconclusive turns a gated metric the test could not judge
// (too few samples) into an inconclusive one: a gate that could not look
// must not pass.
func tooFewIsInconclusive(m *MetricResult) {
	if m.Gated() && m.Verdict == TooFewSamples {
		m.Verdict, m.Unjudged = Inconclusive, "too few samples"
		m.Note = strings.TrimSuffix("not judged: too few samples; "+m.Note, "; ")
	}
}

// namedIsJudged makes a metric the user gated by name (a threshold that
// is not the default one) that could not be judged for want of data
// inconclusive, not a pass: a gate asked for and not judged must not
// pass (compare --threshold minor_faults=0% against a baseline without
// minor faults said OK). Metrics gated by default keep "no data" where a
// run does not measure them (a GPU's figures on the CPU).
func (c *comparer) namedIsJudged(m *MetricResult) {
	if !m.Gated() || m.Verdict != NoData {
		return
	}
	def, isDefault := DefaultThresholds().For(m.Metric)
	if isDefault && def == m.Threshold {
		return
	}
	m.Verdict, m.Unjudged = Inconclusive, "no data"
	m.Note = strings.TrimSuffix("not judged: gated by --threshold, but "+m.Note, "; ")
}

// counterPeaks compares the live counters' peaks: exact when they repeat
// exactly, over at least two repetitions a side (a bound the strategy
// enforces), sampled when they vary (a timing-dependent pile-up). Only live
// counters (those with a final value) are compared: the peak of an event
// count (partitions_done, gpu_starts) is its total, set by the workload.
func (c *comparer) counterPeaks(bsc, nsc *results.Scenario, bm, nm []*results.Repetition) []MetricResult {
	var out []MetricResult
	live := liveCounters(bsc, nsc)
	for _, cn := range counterNames(peakCounters, bm, nm) {
		if live != nil && !live[cn] {
			continue
		}
		name := PeakCounters + "." + cn
		m := MetricResult{Metric: name, Unit: counterUnit(cn), Better: results.LowerIsBetter, P: 1}
		m.Threshold, _ = c.th.For(name)
		bv, bwhy := counterSample(bm, peakCounters, cn)
		nv, nwhy := counterSample(nm, peakCounters, cn)
		switch {
		case bwhy != "" || nwhy != "":
			noData(&m, bv, nv, bwhy, nwhy)
		case len(bv) >= 2 && len(nv) >= 2 && constant(bv) && constant(nv):
			// Repeated exactly (one repetition proves nothing of the kind).
			m.Exact = true
			m.Threshold = c.th.forExact(name)
			exactVerdict(&m, bv[0], nv[0])
			m.Base.N, m.New.N = len(bv), len(nv)
		default:
			sampledVerdict(&m, bv, nv, c.bt)
			if _, set := c.th.For(name); !set && m.Verdict == Worse {
				m.Note = "varies between repetitions: gated only with a threshold for " + name + " or " + PeakCounters
			}
		}
		out = append(out, m)
	}
	return out
}

// finalCounters checks that every counter ended at zero; the worst
// imbalance of any measured repetition counts.
func (c *comparer) finalCounters(bm, nm []*results.Repetition) (out []MetricResult, notes []string) {
	for _, cn := range counterNames(finalCounters, bm, nm) {
		name := FinalCounters + "." + cn
		m := MetricResult{Metric: name, Unit: counterUnit(cn), Better: results.LowerIsBetter, P: 1, Exact: true}
		m.Threshold = c.th.forExact(name)
		bv, bwhy := counterSample(bm, finalCounters, cn)
		nv, nwhy := counterSample(nm, finalCounters, cn)
		if bwhy != "" || nwhy != "" {
			noData(&m, bv, nv, bwhy, nwhy)
		} else {
			exactVerdict(&m, maxAbs(bv), maxAbs(nv))
			if m.Base.Center != 0 {
				notes = append(notes, fmt.Sprintf("the baseline's counter %s did not end at zero (%g): the baseline itself has a leak", cn, m.Base.Center))
			}
		}
		out = append(out, m)
	}
	return out, notes
}

// scenarioVerdict is the most severe verdict of the gated metrics: an
// informational one (CPU time, say) getting worse does not make a faster
// configuration "worse".
func scenarioVerdict(ms []MetricResult) Verdict {
	out := NoData
	for _, m := range ms {
		v := m.Verdict
		if !m.Gated() && (v == Worse || v == Better) || m.Waived != "" {
			v = Same
		}
		if severity[v] > severity[out] {
			out = v
		}
	}
	return out
}

// liveCounters names the counters any repetition of either scenario
// reports a final value for; nil when none does (then every counter is
// taken for live).
func liveCounters(scs ...*results.Scenario) map[string]bool {
	var live map[string]bool
	for _, sc := range scs {
		for i := range sc.Repetitions {
			for k := range sc.Repetitions[i].FinalCounters {
				if live == nil {
					live = map[string]bool{}
				}
				live[k] = true
			}
		}
	}
	return live
}

// counterUnit: byte counters end in _bytes; the others count partitions,
// permits or proofs.
func counterUnit(name string) results.Unit {
	if strings.HasSuffix(name, "_bytes") {
		return results.UnitByte
	}
	return results.UnitCount
}

func exactVerdict(m *MetricResult, base, cur float64) {
	m.Base = &Summary{Center: base, Lo: base, Hi: base, Min: base, Max: base, N: 1}
	m.New = &Summary{Center: cur, Lo: cur, Hi: cur, Min: cur, Max: cur, N: 1}
	m.Change = relChange(base, cur)
	if base == cur {
		m.Verdict = Same
		return
	}
	m.Verdict = judge(m.Change, m.Better, m.Threshold)
}

func sampledVerdict(m *MetricResult, base, cur []float64, bt *benchmath.Thresholds) {
	bs := benchmath.NewSample(base, bt)
	ns := benchmath.NewSample(cur, bt)
	bsum := benchmath.AssumeNothing.Summary(bs, Confidence)
	nsum := benchmath.AssumeNothing.Summary(ns, Confidence)
	m.Base = &Summary{Center: bsum.Center, Lo: bsum.Lo, Hi: bsum.Hi, Min: bs.Values[0], Max: bs.Values[len(bs.Values)-1], N: len(base)}
	m.New = &Summary{Center: nsum.Center, Lo: nsum.Lo, Hi: nsum.Hi, Min: ns.Values[0], Max: ns.Values[len(ns.Values)-1], N: len(cur)}
	m.Change = relChange(bsum.Center, nsum.Center)
	if constant(base, cur) {
		// Identical samples: the U test is undefined (all ties) and
		// there is nothing to detect.
		m.Verdict = Same
		return
	}
	cmp := benchmath.AssumeNothing.Compare(bs, ns)
	m.P = cmp.P
	if !(cmp.P < cmp.Alpha) {
		m.Verdict = Same
		if len(cmp.Warnings) > 0 {
			m.Verdict = TooFewSamples
			m.Note = joinErrors(cmp.Warnings)
		}
		return
	}
	if m.Change == 0 {
		m.Verdict = Same
		return
	}
	m.Verdict = judge(m.Change, m.Better, m.Threshold)
}

// judge turns a significant change into a verdict.
func judge(change float64, better results.Direction, threshold float64) Verdict {
	if change*float64(better) > 0 {
		return Better
	}
	if math.Abs(change) > threshold {
		return Regression
	}
	return Worse
}

func noData(m *MetricResult, base, cur []float64, bwhy, nwhy string) {
	m.Verdict = NoData
	if bwhy == "" && len(base) > 0 {
		m.Base = &Summary{Center: stats.Median(base), N: len(base)}
	}
	if nwhy == "" && len(cur) > 0 {
		m.New = &Summary{Center: stats.Median(cur), N: len(cur)}
	}
	switch {
	case bwhy == nwhy:
		m.Note = bwhy + " in both runs"
	case bwhy == "":
		m.Note = nwhy + " in the new run"
	case nwhy == "":
		m.Note = bwhy + " in the baseline"
	default:
		m.Note = "baseline: " + bwhy + "; new run: " + nwhy
	}
}

// relChange is cur/base - 1, with a zero base giving ±Inf (or 0).
func relChange(base, cur float64) float64 {
	if base == 0 {
		switch {
		case cur > 0:
			return math.Inf(1)
		case cur < 0:
			return math.Inf(-1)
		}
		return 0
	}
	return (cur - base) / math.Abs(base)
}

func joinErrors(errs []error) string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return strings.Join(s, "; ")
}

// configDiff lists what differs between a scenario's two configurations:
// the summary fields, and the workload and pipeline of the full spec.
// Repeats, warm-ups and sampling may differ; those are how it was
// measured, not what.
func configDiff(b, n *results.Scenario) []string {
	var diffs []string
	field := func(name string, bv, nv any) {
		if bv != nv {
			diffs = append(diffs, fmt.Sprintf("scenario %q: %s is %v in base, %v in new", b.Name, name, bv, nv))
		}
	}
	field("strategy", b.Strategy, n.Strategy)
	// The backend is hardware, checked with it (HardwareDiff).
	field("constraints", b.Constraints, n.Constraints)
	field("partitions_per_proof", b.Partitions, n.Partitions)
	field("proofs", b.Proofs, n.Proofs)

	bv, berr := b.DecodeSpec()
	nv, nerr := n.DecodeSpec()
	if berr != nil || nerr != nil {
		diffs = append(diffs, fmt.Sprintf("scenario %q: unreadable spec (base: %v, new: %v)", b.Name, berr, nerr))
		return diffs
	}
	bs, ns := bv.Section("workload", "pipeline"), nv.Section("workload", "pipeline")
	if len(bs) == 0 || len(ns) == 0 {
		// A side without a spec (written by hand, or by another tool)
		// can only be checked on the summary fields above.
		return diffs
	}
	for _, k := range slices.Sorted(maps.Keys(union(bs, ns))) {
		bv, bok := bs[k]
		nv, nok := ns[k]
		if bok && nok && reflect.DeepEqual(bv, nv) {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("scenario %q: spec %s is %s in base, %s in new", b.Name, k, jsonValue(bv, bok), jsonValue(nv, nok)))
	}
	return diffs
}

func union(a, b map[string]any) map[string]any {
	u := maps.Clone(a)
	maps.Copy(u, b)
	return u
}

func jsonValue(v any, ok bool) string {
	if !ok {
		return "absent"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func nameList(run *results.Run) string {
	var names []string
	for i, sc := range run.Scenarios {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(run.Scenarios)-5))
			break
		}
		names = append(names, fmt.Sprintf("%q", sc.Name))
	}
	return strings.Join(names, ", ")
}

func runInfo(r *results.Run) RunInfo {
	return RunInfo{
		ToolVersion: r.ToolVersion, GitCommit: r.Environment.GitCommit,
		Host: r.Environment.Hostname, CPU: r.Environment.CPUModel, GPUs: gpuList(r.Environment),
		StartedAt: r.StartedAt, Complete: r.Complete,
	}
}

func gpuList(env results.Environment) string {
	if !env.NVML {
		return "n/a (NVML absent)"
	}
	var names []string
	for _, g := range env.GPUs {
		names = append(names, g.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// environmentWarnings says what about the two hosts makes the comparison
// weaker: a regression measured across different machines may be the
// machine's.
func environmentWarnings(base, cur *results.Run) []string {
	var w []string
	be, ne := &base.Environment, &cur.Environment
	differ := func(what string, bv, nv any) {
		if bv != nv {
			w = append(w, fmt.Sprintf("%s differs: %v in base, %v in new", what, bv, nv))
		}
	}
	differ("CPU model", be.CPUModel, ne.CPUModel)
	differ("CPU count", be.CPUs, ne.CPUs)
	differ("GOMAXPROCS", be.GOMAXPROCS, ne.GOMAXPROCS)
	differ("host memory", results.UnitByte.Format(float64(be.MemoryBytes)), results.UnitByte.Format(float64(ne.MemoryBytes)))
	differ("GPUs", gpuList(*be), gpuList(*ne))
	if !base.Complete {
		w = append(w, "the baseline run is incomplete (interrupted): scenarios it lacks are not compared")
	}
	if !cur.Complete {
		w = append(w, "the new run is incomplete (interrupted): scenarios it lacks are reported missing")
	}
	return w
}
