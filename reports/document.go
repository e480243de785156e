package reports

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchunit"

	"github.com/provebench/provebench/bench/results"
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
var pipelineStages = []string{"synthesis", "queue_wait", "gpu_start", "finalize", "dealloc"}

func buildDocument(run *results.Run, title string, sums []*scenarioSummary, rendered map[string]bool, timelineFiles map[string]string) *document {
	d := &document{Title: title, Meta: runMeta(run)}
	if !run.Complete {
		d.Warnings = append(d.Warnings, "The run is incomplete (interrupted or still running): only the repetitions that finished are shown.")
	}
	if sim := run.Simulated; sim != nil {
		d.Warnings = append(d.Warnings, "Simulated: every figure is predicted by provebench simulate (one deterministic repetition per configuration; peak RSS is the model's, not the kernel's), calibrated on "+calibrationText(sim.Calibration)+".")
	} else if !run.Environment.NVML {
		d.Warnings = append(d.Warnings, "NVML was absent: GPU memory figures were not measured and read n/a.")
	}
	var unplotted []string
	for _, s := range sums {
		if !s.pps.ok() {
			unplotted = append(unplotted, s.sc.Name)
		}
	}
	for _, s := range sums {
		if s.rssBounds > 0 {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: the kernel peak RSS of %d measured %s is wait4's ru_maxrss, an upper bound (it includes the parent's peak), not the child's VmHWM.",
				s.sc.Name, s.rssBounds, plural(s.rssBounds, "repetition")))
		}
	}
	if len(unplotted) > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("No measured repetition, so not plotted: %s.", strings.Join(unplotted, ", ")))
	}

	d.Sections = append(d.Sections, summarySection(run, sums))
	if rendered[rssAxis.file] {
		d.Sections = append(d.Sections, section{
			Heading: "Throughput against peak memory", Level: 2,
			Text: []string{"One point per configuration at its medians; bars span the minimum to the maximum over the measured repetitions. " +
				"Colour and marker give the strategy. The dashed step line is the Pareto front: no other configuration has both higher throughput and lower peak RSS."},
			Figure: &figureRef{Name: rssAxis.file, Alt: "throughput against peak RSS"},
		})
	}
	if rendered[gpuAxis.file] {
		d.Sections = append(d.Sections, section{
			Heading: "Throughput against peak GPU memory", Level: 2,
			Text:   []string{"As above, against the process's peak GPU memory sampled through NVML."},
			Figure: &figureRef{Name: gpuAxis.file, Alt: "throughput against peak GPU memory"},
		})
	}
	if rendered["strategies"] {
		d.Sections = append(d.Sections, section{
			Heading: "Strategies side by side", Level: 2,
			Text:   []string{"Each row is a configuration, grouped and coloured by strategy: throughput and peak memory side by side; whiskers span the repetitions' minimum to maximum."},
			Figure: &figureRef{Name: "strategies", Alt: "strategies compared: throughput and peak memory"},
		})
	}
	d.Sections = append(d.Sections, counterSection(sums))
	if s, ok := stageSection(sums); ok {
		d.Sections = append(d.Sections, s)
	}
	d.Sections = append(d.Sections, section{Heading: "Timelines", Level: 2, Text: []string{
		"Per configuration, one repetition's samples on one time axis: memory, the pipeline's byte counters and its count counters. " +
			"Time is seconds since the pipeline started; before 0 the child process was loading its proving key."}})
	for _, s := range sums {
		sec := section{Heading: s.sc.Name, Level: 3}
		name := timelineFiles[s.sc.Name]
		if s.timeline != nil && rendered[name] {
			text := "Drawn: " + s.timelineWhy + "."
			if iv := s.timeline.Series.IntervalSeconds; iv > 0 {
				text += fmt.Sprintf(" Sampled every %s.", formatSeconds(iv))
			}
			sec.Text = []string{text}
			sec.Figure = &figureRef{Name: name, Alt: "timeline of " + s.sc.Name}
		} else {
			sec.Text = []string{"No timeline: " + s.timelineWhy + "."}
		}
		d.Sections = append(d.Sections, sec)
	}
	if s, ok := failureSection(sums); ok {
		d.Sections = append(d.Sections, s)
	}
	return d
}

func runMeta(run *results.Run) []string {
	env := &run.Environment
	tool := "provebench " + orUnknown(run.ToolVersion)
	if env.GitCommit != "" {
		tool += ", commit " + env.GitCommit
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
	return append([]string{
		fmt.Sprintf("Run: %s; %s (%s)", tool, when, state),
		host,
		gpus,
		fmt.Sprintf("Configurations: %d; backend %s", len(run.Scenarios), orUnknown(backends(run))),
	}, hostsMeta(run)...)
}

func summarySection(run *results.Run, sums []*scenarioSummary) section {
	pareto := paretoNames(sums)
	t := &table{Header: []string{
		"Scenario", "Strategy", "Repetitions", "partitions/s", "s/proof",
		"peak RSS (kernel)", "peak RSS (sampled)", "peak GPU memory", "device busy", "steady busy", "proofs verified", "Pareto",
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
		t.Rows = append(t.Rows, []string{
			s.sc.Name, s.sc.Strategy, s.statuses,
			fmtSpread(s.pps, kindRate), fmtSpread(s.spp, kindSeconds),
			fmtSpread(s.rss, kindBytes), fmtSpread(s.rssSampled, kindBytes), fmtSpread(s.gpu, kindBytes),
			fmtSpread(s.busy, kindPercent), fmtSpread(s.steadyBusy, kindPercent), verified, front,
		})
	}
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
			"Peak RSS (kernel) is the kernel's exact high-water mark of the child process (VmHWM); " +
			"sampled is the highest RSS the sampler saw" + interval + ". Device busy is the backend's busy time over the pipeline's wall time; " +
			"steady busy the same between 10% and 90% of the partitions done, without the ramp-up and the drain. " +
			"Pareto marks the configurations no other beats on both throughput and peak RSS.",
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
	kindRate valueKind = iota
	kindSeconds
	kindBytes
	kindPercent
)

// fmtSpread writes "median (min–max)" with one unit prefix for all three,
// as benchstat scales: binary for bytes, SI otherwise.
func fmtSpread(s spread, k valueKind) string {
	if !s.ok() {
		return "n/a"
	}
	if k == kindPercent {
		if s.Min == s.Max {
			return fmt.Sprintf("%.0f%%", 100*s.Median)
		}
		return fmt.Sprintf("%.0f%% (%.0f–%.0f)", 100*s.Median, 100*s.Min, 100*s.Max)
	}
	if k == kindRate {
		// A rate reads best plain: 0.835 partitions/s, not 835m.
		if s.Min == s.Max {
			return fmt.Sprintf("%.3g", s.Median)
		}
		return fmt.Sprintf("%.3g (%.3g–%.3g)", s.Median, s.Min, s.Max)
	}
	cls, unit := benchunit.Decimal, ""
	switch k {
	case kindBytes:
		cls, unit = benchunit.Binary, "B"
	case kindSeconds:
		unit = "s"
	}
	sc := benchunit.CommonScale([]float64{s.Median, s.Min, s.Max}, cls)
	if s.Min == s.Max {
		return sc.Format(s.Median) + unit
	}
	bare := func(v float64) string { return strconv.FormatFloat(v/sc.Factor, 'f', sc.Prec, 64) }
	return fmt.Sprintf("%s%s (%s–%s)", sc.Format(s.Median), unit, bare(s.Min), bare(s.Max))
}

func formatBytes(v float64) string   { return benchunit.Scale(v, benchunit.Binary) + "B" }
func formatSeconds(v float64) string { return benchunit.Scale(v, benchunit.Decimal) + "s" }

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
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
