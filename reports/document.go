package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

// document is the report's content, independent of its rendering: the
// Markdown and HTML writers render the same sections.
type document struct {
	Title    string
	Meta     []string
	Warnings []string
	Sections []section
}

type section struct {
	Heading string
	Level   int      // 2 for a section, 3 for a subsection
	Text    []string // paragraphs of plain text
	Figure  *figureRef
	Table   *table
}

type figureRef struct {
	Name string // file name without extension
	Alt  string
}

type table struct {
	Header []string
	Rows   [][]string
}

// pipelineStages are the pipeline's own stages, in pipeline order; the
// backend's stages (ntt, msm_*, ...) follow, sorted.
var pipelineStages = []string{"admission", "synthesis", "queue_wait", "gpu_start", "free_abc", "finalize", "dealloc"}

func buildDocument(run *results.Run, title string, sums []*scenarioSummary, rendered map[string]bool, timelineFiles map[string]string) *document {
	d := &document{Title: title, Meta: runMeta(run), Warnings: documentWarnings(run, sums)}
	d.Sections = append(d.Sections, summarySection(run, sums))
	d.Sections = append(d.Sections, plotSections(rendered)...)
	d.Sections = append(d.Sections, counterSection(sums))
	if s, ok := stageSection(sums); ok {
		d.Sections = append(d.Sections, s)
	}
	d.Sections = append(d.Sections, timelineSections(sums, rendered, timelineFiles)...)
	if s, ok := failureSection(sums); ok {
		d.Sections = append(d.Sections, s)
	}
	d.Sections = append(d.Sections, glossarySection(run))
	return d
}

// documentWarnings are what a reader must know before trusting the
// figures: a run that did not finish, a simulated one, GPU figures not
// measured, kernel peaks that are only bounds, configurations not plotted.
func documentWarnings(run *results.Run, sums []*scenarioSummary) []string {
	var warnings []string
	if !run.Complete {
		warnings = append(warnings, "The run is incomplete (interrupted or still running): only the repetitions that finished are shown.")
	}
	if sim := run.Simulated; sim != nil {
		warnings = append(warnings, "Simulated: every figure is predicted by provebench simulate (one deterministic repetition per configuration; peak RSS is the model's, not the kernel's), calibrated on "+calibrationText(sim.Calibration)+".")
	} else if !run.Environment.NVML {
		warnings = append(warnings, "NVML was absent: GPU memory figures were not measured and read n/a.")
	}
	if w := loadSkewWarning(run, sums); w != "" {
		warnings = append(warnings, w)
	}
	var unplotted []string
	for _, s := range sums {
		if !s.pps.ok() {
			unplotted = append(unplotted, s.sc.Name)
		}
	}
	for _, s := range sums {
		if s.rssBounds > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: the kernel peak RSS of %d measured %s is wait4's ru_maxrss, an upper bound (it includes the parent's peak), not the child's VmHWM.",
				s.sc.Name, s.rssBounds, units.Noun(s.rssBounds, "repetition")))
		}
	}
	if len(unplotted) > 0 {
		warnings = append(warnings, fmt.Sprintf("No measured repetition, so not plotted: %s.", strings.Join(unplotted, ", ")))
	}
	return warnings
}

// runPlots are the whole run's plots as the report shows them, in its
// order: each becomes a section where its figure was drawn.
var runPlots = []struct{ file, heading, text, alt string }{
	{rssAxis.file, "Throughput against peak memory",
		"One point per configuration at its medians; bars span the minimum to the maximum over the measured repetitions. " +
			"Colour and marker give the strategy. Ringed points, joined by the dashed line, are the Pareto set: no other configuration beats them beyond the noise, " +
			"that is, none is at least as good on both axes (its range reaches theirs) and clearly better on one (its range clears theirs). " +
			"Configurations whose ranges overlap are not told apart, however their medians fall (with one repetition a range is a point, and this is plain Pareto dominance). " +
			"An axis that does not start at zero says where it starts.",
		"throughput against peak RSS"},
	{datasetAxis.file, "Throughput against peak dataset bytes",
		"As above, against the peak of the pipeline's live dataset bytes (the dataset_bytes counter's own peak, exact and free of the process's noise): " +
			"the memory the strategies actually trade for throughput.",
		"throughput against peak dataset bytes"},
	{gpuAxis.file, "Throughput against peak GPU memory",
		"As above, against the process's peak GPU memory sampled through NVML.",
		"throughput against peak GPU memory"},
	{"strategies", "Strategies side by side",
		"Each row is a configuration, grouped and coloured by strategy: throughput and peak memory side by side. " +
			"The bar is the median; each dot one measured repetition, so the spread and any outlier show.",
		"strategies compared: throughput and peak memory, each repetition a dot"},
}

// plotSections are the sections of runPlots whose figure was drawn.
func plotSections(rendered map[string]bool) []section {
	var out []section
	for _, p := range runPlots {
		if rendered[p.file] {
			out = append(out, section{Heading: p.heading, Level: 2, Text: []string{p.text}, Figure: &figureRef{Name: p.file, Alt: p.alt}})
		}
	}
	return out
}

// timelineSections are the Timelines section and, under it, each
// configuration's timeline (or why it has none) and its first failed
// repetition's.
func timelineSections(sums []*scenarioSummary, rendered map[string]bool, timelineFiles map[string]string) []section {
	out := []section{{Heading: "Timelines", Level: 2, Text: []string{
		"Per configuration, one repetition's samples on one time axis: memory, the pipeline's byte counters and its count counters. " +
			"Time is seconds since the pipeline started; before 0 the child process was loading its proving key. " +
			"The timelines of the run share their memory axes and, for finished repetitions, their time axis, so they can be compared side by side " +
			"(a repetition stopped early keeps its own time range); each counter has one colour in all of them.",
		"The memory panel accounts for RSS: the bands, bottom up, are the proving key's resident bytes, the pipeline's live datasets (and, on the CPU backend, its working buffers), " +
			"the Go runtime's memory (heap, stacks and metadata not returned to the kernel) and the rest of RSS " +
			"(the binary, C allocations, memory the Go runtime keeps but has not touched). " +
			"A repetition that did not finish shows the moment it was stopped (red line) and, when a memory limit stopped it, the limit."}}}
	for _, s := range sums {
		name := timelineFiles[s.sc.Name]
		out = append(out, timelineSection(s, rendered[name], name))
		if r := s.failedTimeline; r != nil && rendered[name+"-failed"] {
			out = append(out, section{
				Heading: fmt.Sprintf("%s: repetition %d (%s)", s.sc.Name, r.Index, r.Status), Level: 3,
				Text:   []string{"The first repetition of this configuration that did not finish: " + strings.Join(strings.Fields(r.Error), " ") + "."},
				Figure: &figureRef{Name: name + "-failed", Alt: fmt.Sprintf("timeline of %s, repetition %d (%s)", s.sc.Name, r.Index, r.Status)},
			})
		}
	}
	return out
}

// timelineSection is one configuration's timeline, named file, with which
// repetition it draws and how it was sampled; or, where none was drawn,
// why.
func timelineSection(s *scenarioSummary, drawn bool, file string) section {
	sec := section{Heading: s.sc.Name, Level: 3}
	if s.timeline == nil || !drawn {
		sec.Text = []string{"No timeline: " + s.timelineWhy + "."}
		return sec
	}
	text := "Drawn: " + s.timelineWhy + "."
	if iv := s.timeline.Series.IntervalSeconds; iv > 0 {
		text += fmt.Sprintf(" Sampled every %s.", formatSeconds(iv))
	}
	if hp := heapProfiles(s); hp != "" {
		text += " Heap profiles at the Go heap's peak (go tool pprof FILE): " + hp + "."
	}
	sec.Text = []string{text}
	sec.Figure = &figureRef{Name: file, Alt: "timeline of " + s.sc.Name}
	return sec
}

// heapProfiles lists a configuration's heap profile files, with when each
// was taken.
func heapProfiles(s *scenarioSummary) string {
	var out []string
	for _, r := range s.sc.Repetitions {
		if r.HeapProfile == "" {
			continue
		}
		f := r.HeapProfile
		if r.HeapProfileSeconds != nil {
			f += fmt.Sprintf(" (t = %s)", formatSeconds(*r.HeapProfileSeconds))
		}
		out = append(out, f)
	}
	return strings.Join(out, ", ")
}

// glossarySection defines every series the run recorded, known ones from
// the glossary and any other as the driver's own.
func glossarySection(run *results.Run) section {
	seen := map[string]bool{}
	for _, sc := range run.Scenarios {
		for _, r := range sc.Repetitions {
			for k := range r.PeakCounters {
				seen[k] = true
			}
			if r.Series != nil {
				for k := range r.Series.Counters {
					seen[k] = true
				}
			}
		}
	}
	t := &table{Header: []string{"Counter", "Kind", "Meaning"}}
	kinds := map[panelKind]string{panelMemory: "bytes (RSS account)", panelBytes: "bytes, live", panelStages: "partitions, live (stage)",
		panelCounts: "count, live", panelEvents: "count, cumulative", panelGC: "count, cumulative", panelNone: "cumulative"}
	for _, c := range glossary {
		if seen[c.name] {
			t.Rows = append(t.Rows, []string{c.name, kinds[c.panel], c.meaning})
			delete(seen, c.name)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		t.Rows = append(t.Rows, []string{k, "—", "Recorded by the driver; not one of the built-in pipeline's counters."})
	}
	return section{Heading: "Glossary of counters", Level: 2, Table: t, Text: []string{
		"Live counters say what the pipeline holds now: every increment has its decrement and a correct run ends with them at zero. " +
			"Cumulative ones only grow. Peaks are exact (kept by the counters themselves); the timelines sample them every interval.",
	}}
}

func runMeta(run *results.Run) []string {
	env := &run.Environment
	tool := "provebench " + orUnknown(run.ToolVersion)
	if c := env.GitCommit; c != "" {
		// A version read from the build names the commit already (module
		// version, then commit): said once, as the commit.
		if v := strings.TrimSpace(strings.Replace(run.ToolVersion, c, "", 1)); v != run.ToolVersion {
			tool = "provebench " + orUnknown(v)
		}
		tool += ", commit " + c
	}
	when := "started " + formatTime(run.StartedAt)
	if !run.FinishedAt.IsZero() {
		when += ", finished " + formatTime(run.FinishedAt)
	}
	state := "complete"
	if !run.Complete {
		state = "INCOMPLETE"
	}
	host := fmt.Sprintf("Host: %s, %s (%d CPUs, GOMAXPROCS %d), %s memory, %s/%s",
		orUnknown(env.Hostname), orUnknown(env.CPUModel), env.CPUs, env.GOMAXPROCS,
		formatBytes(float64(env.MemoryBytes)), env.OS, env.Arch)
	if env.Kernel != "" {
		host += ", kernel " + env.Kernel
	}
	if env.GoVersion != "" {
		host += ", " + env.GoVersion
	}
	gpus := "GPUs: NVML absent (GPU figures n/a)"
	if env.NVML {
		var names []string
		for _, g := range env.GPUs {
			names = append(names, fmt.Sprintf("%d: %s (%s)", g.Index, g.Name, formatBytes(float64(g.MemoryBytes))))
		}
		if len(names) == 0 {
			names = append(names, "none found")
		}
		gpus = "GPUs: " + strings.Join(names, "; ")
		if env.DriverVersion != "" {
			gpus += ", driver " + env.DriverVersion
		}
	}
	configs := fmt.Sprintf("Configurations: %d; backend %s", len(run.Scenarios), orUnknown(backends(run)))
	if run.RunOrder == results.RunOrderInterleaved {
		configs += "; repetitions interleaved (run in rounds over the configurations)"
	}
	return append([]string{
		fmt.Sprintf("Run: %s; %s (%s)", tool, when, state),
		host,
		gpus,
		configs,
	}, hostsMeta(run)...)
}

func summarySection(run *results.Run, sums []*scenarioSummary) section {
	pareto := paretoNames(sums)
	t := &table{Header: []string{
		"Scenario", "Strategy", "Repetitions", heading(results.PartitionsPerSecond), heading(results.SecondsPerProof),
		heading(results.PeakRSSBytes), heading(results.PeakRSSSampledBytes), heading(results.PeakGPUMemoryBytes),
		heading(results.DeviceBusyFraction), heading(results.SteadyDeviceBusyFraction), "proofs verified", "Pareto",
	}}
	for _, s := range sums {
		verified := "n/a (key not verifiable)"
		if s.verifiable > 0 {
			verified = fmt.Sprintf("%d/%d", s.verified, s.verifiable)
		} else if len(s.measured) == 0 {
			verified = "—"
		}
		front := ""
		if pareto[s.sc.Name] {
			front = "yes"
		}
		if s.loadSkew != nil {
			front += fmt.Sprintf(" (host load differed: %.0f%% against %.0f%%)", 100*s.loadSkew.Others, 100*s.loadSkew.Rest)
			front = strings.TrimSpace(front)
		}
		t.Rows = append(t.Rows, []string{
			s.sc.Name, s.sc.Strategy, s.statuses,
			cell(s.pps, results.PartitionsPerSecond), cell(s.spp, results.SecondsPerProof),
			cell(s.rss, results.PeakRSSBytes), cell(s.rssSampled, results.PeakRSSSampledBytes), cell(s.gpu, results.PeakGPUMemoryBytes),
			cell(s.busy, results.DeviceBusyFraction), cell(s.steadyBusy, results.SteadyDeviceBusyFraction), verified, front,
		})
	}
	deviceNotes := addDeviceColumns(t, sums)
	addAnonColumn(t, sums)
	addHostColumn(t, run)
	interval := ""
	for _, s := range sums {
		if s.timeline != nil && s.timeline.Series.IntervalSeconds > 0 {
			interval = " every " + formatSeconds(s.timeline.Series.IntervalSeconds)
			break
		}
	}
	return section{Heading: "Summary", Level: 2, Table: t, Text: []string{
		"Medians over the measured repetitions (finished, not warm-ups), the range in brackets. " +
			"Peak RSS (kernel) is the kernel's exact high-water mark of the child process (VmHWM), the resident pages of the binary itself included " +
			"(how many depends on how the binary sits in the page cache, not on the code); " +
			"sampled is the highest RSS the sampler saw" + interval + "; peak anon (work) is the work's own memory without the binary's pages (the figure ab and compare gate). Device busy is the backend's busy time over the pipeline's wall time; " +
			"steady busy the same between 10% and 90% of the partitions done, without the ramp-up and the drain. " +
			"Pareto marks the configurations no other beats beyond the noise of the repetitions on both throughput and peak RSS (see the plot below), " +
			"and a configuration whose repetitions ran while neighbours took a different share of the host (median against the other configurations' medians, beyond a tenth of the host)." + deviceNotes,
	}}
}

func counterSection(sums []*scenarioSummary) section {
	names := map[string]bool{}
	for _, s := range sums {
		for k := range s.peakCounters {
			names[k] = true
		}
	}
	counters := slices.Sorted(maps.Keys(names))
	t := &table{Header: []string{"Scenario"}}
	for _, c := range counters {
		t.Header = append(t.Header, c+" peak")
	}
	t.Header = append(t.Header, "final counters")
	for _, s := range sums {
		row := []string{s.sc.Name}
		for _, c := range counters {
			v, ok := s.peakCounters[c]
			switch {
			case !ok:
				row = append(row, "—")
			case strings.HasSuffix(c, "_bytes"):
				row = append(row, formatBytes(float64(v)))
			default:
				row = append(row, strconv.FormatInt(v, 10))
			}
		}
		final := "all zero"
		switch {
		case len(s.measured) == 0:
			final = "—"
		case len(s.finalNonZero) > 0:
			final = "NOT ZERO: " + strings.Join(s.finalNonZero, ", ")
		}
		row = append(row, final)
		t.Rows = append(t.Rows, row)
	}
	return section{Heading: "Buffer counters", Level: 2, Table: t, Text: []string{
		"Each live counter's highest peak over the measured repetitions, exact (kept by the counters themselves, not sampled). " +
			"A correct run ends with every live counter at zero; NOT ZERO names the counters that did not.",
	}}
}

func stageSection(sums []*scenarioSummary) (section, bool) {
	names := map[string]bool{}
	for _, s := range sums {
		for k := range s.stages {
			names[k] = true
		}
	}
	if len(names) == 0 {
		return section{}, false
	}
	var stages []string
	for _, k := range pipelineStages {
		if names[k] {
			stages = append(stages, k)
			delete(names, k)
		}
	}
	stages = append(stages, slices.Sorted(maps.Keys(names))...)
	t := &table{Header: append([]string{"Scenario"}, stages...)}
	for _, s := range sums {
		row := []string{s.sc.Name}
		for _, k := range stages {
			if v, ok := s.stages[k]; ok {
				row = append(row, formatSeconds(v))
			} else {
				row = append(row, "—")
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return section{Heading: "Stage times", Level: 2, Table: t, Text: []string{
		"Mean time per partition in each stage, the median over the measured repetitions: the pipeline's stages first, then the backend's.",
		"Why a backend stage, an MSM above all, takes longer here than measured alone (make bench-cpu, make bench-cuda): it is timed around its kernels, " +
			"so it counts everything its device waits for in between, and in the pipeline the device shares the host with the rest of the pipeline. " +
			"On the CUDA backend the times are CUDA events on the compute stream: the thread that issues the MSMs competes for CPU with synthesis, " +
			"which keeps every core busy, so the GPU waits for launches it gets at once when the host is idle; and the next partition's upload from pageable memory " +
			"runs on the copy engine meanwhile, staged through the CPU and sharing device memory bandwidth with the MSMs' bucket accumulation. " +
			"On the CPU backend the MSMs share the cores with synthesis outright. " +
			"The overlap is what gives the throughput; the longer stage is its price, not a slower kernel. " +
			"To see a stage's own cost, run a configuration without overlap (concurrency 1, partition_workers 1).",
	}}, true
}

func failureSection(sums []*scenarioSummary) (section, bool) {
	t := &table{Header: []string{"Scenario", "Repetition", "Status", "Error"}}
	for _, s := range sums {
		for _, r := range s.failures {
			msg := strings.Join(strings.Fields(r.Error), " ")
			if msg == "" {
				msg = "—"
			}
			t.Rows = append(t.Rows, []string{s.sc.Name, strconv.Itoa(r.Index), string(r.Status), msg})
		}
	}
	if len(t.Rows) == 0 {
		return section{}, false
	}
	return section{Heading: "Repetitions that did not finish", Level: 2, Table: t, Text: []string{
		"These repetitions are left out of every figure above.",
	}}, true
}

type valueKind int

const (
	kindRate valueKind = iota // plain: rates, counts, joules
	kindSeconds
	kindBytes
	kindPercent
)

// kindOf is how a figure of the unit is written.
func kindOf(u results.Unit) valueKind {
	switch u {
	case results.UnitSecond:
		return kindSeconds
	case results.UnitByte:
		return kindBytes
	case results.UnitFraction:
		return kindPercent
	}
	return kindRate
}

// heading is a metric's column heading (the metric table's).
func heading(metric string) string { return results.MetricOf(metric).Heading }

// cell is a metric's spread as the summary writes it.
func cell(s spread, metric string) string {
	return fmtSpread(s, kindOf(results.MetricOf(metric).Unit))
}

// capitalize starts a heading that begins a sentence with a capital.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// fmtSpread writes "median (min–max)" with one unit prefix for all three,
// as benchstat scales: binary for bytes, SI otherwise.
func fmtSpread(s spread, k valueKind) string {
	if !s.ok() {
		return "n/a"
	}
	if k == kindPercent {
		if math.Round(100*s.Min) == math.Round(100*s.Max) {
			return fmt.Sprintf("%.0f%%", 100*s.Median)
		}
		return fmt.Sprintf("%.0f%% (%.0f–%.0f)", 100*s.Median, 100*s.Min, 100*s.Max)
	}
	if k == kindRate {
		// A rate reads best plain: 0.835 partitions/s, not 835m.
		if fmt.Sprintf("%.3g", s.Min) == fmt.Sprintf("%.3g", s.Max) {
			return fmt.Sprintf("%.3g", s.Median)
		}
		return fmt.Sprintf("%.3g (%.3g–%.3g)", s.Median, s.Min, s.Max)
	}
	if k == kindBytes {
		div, unit := units.ByteScale(s.Max)
		if units.FormatScaled(s.Min, div) == units.FormatScaled(s.Max, div) {
			return units.FormatScaled(s.Median, div) + " " + unit
		}
		return fmt.Sprintf("%s %s (%s–%s)", units.FormatScaled(s.Median, div), unit, units.FormatScaled(s.Min, div), units.FormatScaled(s.Max, div))
	}
	div, unit := units.SecondsScale(s.Max)
	if units.FormatScaled(s.Min, div) == units.FormatScaled(s.Max, div) {
		return units.FormatScaled(s.Median, div) + " " + unit
	}
	return fmt.Sprintf("%s %s (%s–%s)", units.FormatScaled(s.Median, div), unit, units.FormatScaled(s.Min, div), units.FormatScaled(s.Max, div))
}

func formatBytes(v float64) string   { return units.FormatBytes(int64(v)) }
func formatSeconds(v float64) string { return units.FormatSeconds(v) }

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// calibrationText names a simulation's calibration documents.
func calibrationText(files []string) string {
	if len(files) == 0 {
		return "no runs (stage costs written in the scenarios)"
	}
	return strings.Join(files, ", ")
}

// addAnonColumn puts the work's own peak (peak anon) after the sampled
// peak RSS where any configuration recorded it: documents from before it
// was measured, and the exec driver's, keep their columns.
func addAnonColumn(t *table, sums []*scenarioSummary) {
	if !slices.ContainsFunc(sums, func(s *scenarioSummary) bool { return s.anon.ok() }) {
		return
	}
	at := slices.Index(t.Header, heading(results.PeakRSSSampledBytes)) + 1
	t.Header = slices.Insert(t.Header, at, heading(results.PeakAnonBytes))
	for i, s := range sums {
		t.Rows[i] = slices.Insert(t.Rows[i], at, cell(s.anon, results.PeakAnonBytes))
	}
}
