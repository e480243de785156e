package reports

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/results"
)

// spread is a figure over a scenario's measured repetitions: its median
// and range. Reports show the range rather than a confidence interval
// because it exists from one repetition up; compare does the statistics.
type spread struct {
	Median, Min, Max float64
	N                int
	// Values are the repetitions' figures, sorted: the strip plots draw
	// each one.
	Values []float64
}

func (s spread) ok() bool { return s.N > 0 }

func spreadOf(vals []float64) spread {
	if len(vals) == 0 {
		return spread{}
	}
	sorted := slices.Sorted(slices.Values(vals))
	return spread{Median: stats.Median(sorted), Min: sorted[0], Max: sorted[len(sorted)-1], N: len(vals), Values: sorted}
}

// scenarioSummary is what the report says about one configuration.
type scenarioSummary struct {
	sc       *results.Scenario
	measured []*results.Repetition
	// loadSkew is set when the configuration's repetitions ran under a
	// different host load than the rest's (results.LoadSkews).
	loadSkew *results.LoadSkew

	pps, spp, rss, rssSampled, busy, steadyBusy spread
	// anon is the work's own peak (peak_anon_bytes); N == 0 in documents
	// from before it was measured, and for the exec driver.
	anon spread
	// gpu and gpuDevice have N == 0 when NVML was absent.
	gpu, gpuDevice spread
	// device is the device time per partition, setup the time until the
	// prover was ready, joules the GPUs' energy per proof: N == 0 where a
	// repetition lacks them (exec driver, no NVML, older documents).
	device, setup, joules spread
	// dataset is the peak of the pipeline's live dataset bytes (exact,
	// from the counter's own peak); N == 0 when not recorded.
	dataset spread

	verified, verifiable int // proofs verified / proofs of verifiable measured repetitions
	// rssBounds counts measured repetitions whose kernel peak is wait4's
	// ru_maxrss, an upper bound rather than the child's own VmHWM.
	rssBounds int
	warmups   int
	statuses  string // "9 ok, 1 failed"
	failures  []*results.Repetition

	// live names the pipeline's live counters: those any repetition
	// reports a final value for. The others are cumulative event counts.
	live map[string]bool
	// peakCounters is each live counter's highest peak over the measured
	// repetitions (every counter's when the run reports no final values);
	// finalNonZero lists counters that did not end at zero.
	peakCounters map[string]int64
	finalNonZero []string
	// stages is each stage's median (over measured repetitions) of its
	// mean duration in seconds.
	stages map[string]float64

	// timeline is the repetition whose series is drawn; timelineWhy says
	// how it was chosen.
	timeline    *results.Repetition
	timelineWhy string
	// failedTimeline is the first repetition that did not finish and has
	// a series, drawn beside the representative one (nil when the
	// representative is itself a failure, or none failed).
	failedTimeline *results.Repetition
}

func summarize(sc *results.Scenario) *scenarioSummary {
	s := &scenarioSummary{sc: sc, live: map[string]bool{}, peakCounters: map[string]int64{}, stages: map[string]float64{}}
	for i := range sc.Repetitions {
		for k := range sc.Repetitions[i].FinalCounters {
			s.live[k] = true
		}
	}
	s.sortRepetitions()
	s.spreads()
	s.tally()
	s.pickTimelines()
	return s
}

// pickTimelines chooses the repetition whose timeline is drawn and, when
// that one finished, the first failure with a series to draw beside it.
func (s *scenarioSummary) pickTimelines() {
	s.timeline, s.timelineWhy = representative(s.sc, s.measured)
	if s.timeline == nil || !s.timeline.Measured() {
		return
	}
	for _, r := range s.failures {
		if hasSeries(r) {
			s.failedTimeline = r
			return
		}
	}
}

// sortRepetitions counts the warm-ups and parts the other repetitions
// into measured ones and failures, and says how many of each status.
func (s *scenarioSummary) sortRepetitions() {
	counts := map[results.Status]int{}
	for i := range s.sc.Repetitions {
		r := &s.sc.Repetitions[i]
		if r.Warmup {
			s.warmups++
			continue
		}
		counts[r.Status]++
		if r.Measured() {
			s.measured = append(s.measured, r)
		} else {
			s.failures = append(s.failures, r)
		}
	}
	s.statuses = statusText(counts, s.warmups)
}

// spreads takes each figure's spread over the measured repetitions.
func (s *scenarioSummary) spreads() {
	for _, f := range []struct {
		metric string
		into   *spread
	}{
		{results.PartitionsPerSecond, &s.pps},
		{results.SecondsPerProof, &s.spp},
		{results.PeakRSSBytes, &s.rss},
		{results.PeakRSSSampledBytes, &s.rssSampled},
		{results.DeviceBusyFraction, &s.busy},
		{results.DeviceSecondsPerPartition, &s.device},
		{results.SetupSeconds, &s.setup},
		{results.JoulesPerProof, &s.joules},
		{results.PeakGPUMemoryBytes, &s.gpu},
		{results.PeakGPUDeviceMemoryBytes, &s.gpuDevice},
	} {
		*f.into = spreadOfEvery(s.measured, results.MetricOf(f.metric))
	}
	s.steadyBusy = spreadOfSome(s.measured, results.MetricOf(results.SteadyDeviceBusyFraction))
	s.anon = spreadOfSome(s.measured, results.MetricOf(results.PeakAnonBytes))
	s.dataset = spreadOfCounter(s.measured, "dataset_bytes")
}

// tally reads what the measured repetitions report beside their figures:
// kernel peaks that are only bounds, proofs verified, the live counters'
// peaks and final values, and the stages' times.
func (s *scenarioSummary) tally() {
	stageVals := map[string][]float64{}
	finals := map[string]bool{}
	for _, r := range s.measured {
		if r.PeakRSSSource == results.PeakFromRusage {
			s.rssBounds++
		}
		if r.Verifiable {
			s.verifiable += r.Proofs
			s.verified += r.ProofsVerified
		}
		s.keepPeaks(r.PeakCounters)
		for k, v := range r.FinalCounters {
			if v != 0 {
				finals[k] = true
			}
		}
		for k, st := range r.Stages {
			stageVals[k] = append(stageVals[k], st.MeanSeconds)
		}
	}
	s.finalNonZero = slices.Sorted(maps.Keys(finals))
	for k, v := range stageVals {
		s.stages[k] = spreadOf(v).Median
	}
}

// keepPeaks raises each live counter's peak to a repetition's where that
// is higher (every counter's when the run reports no final values).
func (s *scenarioSummary) keepPeaks(peaks map[string]int64) {
	for k, v := range peaks {
		if len(s.live) > 0 && !s.live[k] {
			continue
		}
		if cur, ok := s.peakCounters[k]; !ok || v > cur {
			s.peakCounters[k] = v
		}
	}
}

// spreadOfEvery is the spread of a figure every repetition must have:
// none unless every one has it.
func spreadOfEvery(reps []*results.Repetition, m results.Metric) spread {
	var vals []float64
	for _, r := range reps {
		v, ok := m.Value(r)
		if !ok {
			return spread{}
		}
		vals = append(vals, v)
	}
	return spreadOf(vals)
}

// spreadOfSome is the spread of a figure over the repetitions that have it
// (its N says how many). Steady busy is absent from a repetition that was
// too short or too coarsely sampled to tell: the others still measure the
// configuration, where a figure every repetition must have (spreadOfEvery) would
// be none at all.
func spreadOfSome(reps []*results.Repetition, m results.Metric) spread {
	var vals []float64
	for _, r := range reps {
		if v, ok := m.Value(r); ok {
			vals = append(vals, v)
		}
	}
	return spreadOf(vals)
}

// spreadOfCounter is the spread of a counter's peak over the repetitions,
// none unless every one reported it.
func spreadOfCounter(reps []*results.Repetition, counter string) spread {
	var vals []float64
	for _, r := range reps {
		v, ok := r.PeakCounters[counter]
		if !ok {
			return spread{}
		}
		vals = append(vals, float64(v))
	}
	return spreadOf(vals)
}

// deviceColumns are the summary's optional columns, shown only when some
// configuration of the run has the figure, after the seconds-per-proof
// column; a configuration without it reads n/a there, never 0.
var deviceColumns = []struct {
	metric, note string
	get          func(s *scenarioSummary) spread
}{
	{results.DeviceSecondsPerPartition,
		"is the device's own time per partition (CUDA events on a GPU; the GPU worker's busy time on the CPU backend).",
		func(s *scenarioSummary) spread { return s.device }},
	{results.SetupSeconds,
		"is the time until the prover was ready (key loaded, on the device, kernels warm), outside the measured window when the run is warm.",
		func(s *scenarioSummary) spread { return s.setup }},
	{results.JoulesPerProof,
		"is the GPUs' energy per proof over the measured window (NVML).",
		func(s *scenarioSummary) spread { return s.joules }},
}

// addDeviceColumns inserts deviceColumns the run has into the summary
// table, after its "s/proof" column, and returns the sentences that
// explain them.
func addDeviceColumns(t *table, sums []*scenarioSummary) string {
	at := slices.Index(t.Header, results.MetricOf(results.SecondsPerProof).Heading) + 1
	var notes []string
	for _, c := range deviceColumns {
		if !slices.ContainsFunc(sums, func(s *scenarioSummary) bool { return c.get(s).ok() }) {
			continue
		}
		m := results.MetricOf(c.metric)
		t.Header = slices.Insert(t.Header, at, m.Heading)
		for i, s := range sums {
			t.Rows[i] = slices.Insert(t.Rows[i], at, fmtSpread(c.get(s), kindOf(m.Unit)))
		}
		at++
		notes = append(notes, capitalize(m.Heading)+" "+c.note)
	}
	if len(notes) == 0 {
		return ""
	}
	return " " + strings.Join(notes, " ")
}

// representative picks the repetition whose series the timeline draws: the
// measured one of median throughput (the lower middle for an even count),
// else the last non-warm-up repetition with a series, whatever its status,
// since the timeline of a failure is what a reader wants to see.
func representative(sc *results.Scenario, measured []*results.Repetition) (*results.Repetition, string) {
	var withSeries []*results.Repetition
	for _, r := range measured {
		if hasSeries(r) {
			withSeries = append(withSeries, r)
		}
	}
	if len(withSeries) > 0 {
		r := stats.MedianBy(withSeries, func(r *results.Repetition) float64 { return r.PartitionsPerSecond })
		if len(withSeries) == 1 {
			return r, fmt.Sprintf("repetition %d, the only measured one with a series", r.Index)
		}
		return r, fmt.Sprintf("repetition %d, the median by throughput of %d measured repetitions", r.Index, len(withSeries))
	}
	for i := len(sc.Repetitions) - 1; i >= 0; i-- {
		r := &sc.Repetitions[i]
		if !r.Warmup && hasSeries(r) {
			return r, fmt.Sprintf("repetition %d (%s): no measured repetition has a series", r.Index, r.Status)
		}
	}
	return nil, "no repetition recorded a series"
}

func hasSeries(r *results.Repetition) bool { return r.Series != nil && len(r.Series.T) > 0 }

// statusText describes repetitions by status, ok first.
func statusText(counts map[results.Status]int, warmups int) string {
	var parts []string
	if n := counts[results.StatusOK]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d ok", n))
	}
	for _, st := range slices.Sorted(maps.Keys(counts)) {
		if st != results.StatusOK {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none")
	}
	s := strings.Join(parts, ", ")
	if warmups > 0 {
		s += fmt.Sprintf(" (+%d warm-up)", warmups)
	}
	return s
}

// strategyOrder lists the strategies in palette order: those colours
// fixes, by their index (whether or not the run holds them, so each keeps
// its colour), then the run's others, sorted.
func strategyOrder(sums []*scenarioSummary, colours map[string]int) []string {
	out := slices.SortedFunc(maps.Keys(colours), func(a, b string) int { return cmp.Compare(colours[a], colours[b]) })
	others := map[string]bool{}
	for _, s := range sums {
		if _, ok := colours[s.sc.Strategy]; !ok {
			others[s.sc.Strategy] = true
		}
	}
	return append(out, slices.Sorted(maps.Keys(others))...)
}

// strategyIndex is a strategy's palette index: its place in order.
func strategyIndex(strategy string, order []string) int {
	return slices.Index(order, strategy)
}
