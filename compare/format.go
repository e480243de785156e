package compare

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"

	"github.com/provebench/provebench/internal/markdown"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

// StepSummaryEnv names the file GitHub Actions shows as a job's summary;
// the CLI appends WriteMarkdown's output to it when it is set.
const StepSummaryEnv = "GITHUB_STEP_SUMMARY"

// overview are the metrics of the scenario overview's columns, headed by
// their table headings.
func overview() []results.Metric {
	var ms []results.Metric
	for _, name := range []string{
		results.SecondsPerProof, results.PartitionsPerSecond, results.DeviceSecondsPerPartition,
		results.PeakRSSBytes, results.PeakGPUMemoryBytes,
	} {
		ms = append(ms, results.MetricOf(name))
	}
	return ms
}

// headline is the one-line outcome, written from Outcome so that it says
// what the exit status says: a label (OK, REGRESSION, INCOMPLETE,
// INCONCLUSIVE) and the sentence.
func (r *Report) headline() (Outcome, string, string) {
	regressions, scenarios, added := 0, 0, 0
	var regressed []string
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Verdict == Added {
			added++
		}
		if rs := s.Regressions(); len(rs) > 0 {
			regressions += len(rs)
			scenarios++
			for _, m := range rs {
				if !slices.Contains(regressed, m.Metric) {
					regressed = append(regressed, m.Metric)
				}
			}
		}
	}
	compared := r.compared()
	missing := r.MissingScenarios()
	var extra []string
	if len(missing) > 0 {
		extra = append(extra, fmt.Sprintf("the new run lacks %d of the baseline's configurations: %s", len(missing), r.missingText(missing)))
	}
	if unjudged := r.Unjudged(); len(unjudged) > 0 {
		extra = append(extra, fmt.Sprintf("%d gated %s not judged: %s", len(unjudged), units.Noun(len(unjudged), "metric"), r.describeUnjudged(unjudged)))
	}
	if waived := r.WallNotJudged(); len(waived) > 0 {
		extra = append(extra, r.describeWallNotJudged(waived))
	}
	if added > 0 {
		extra = append(extra, fmt.Sprintf("%d without a baseline", added))
	}
	tail := ""
	if len(extra) > 0 {
		tail = "; " + strings.Join(extra, "; ")
	}
	out := r.Outcome()
	if out == Regressed {
		return out, "REGRESSION", fmt.Sprintf("%d %s (%s) in %d of %d compared %s%s",
			regressions, units.Noun(regressions, "regression"), strings.Join(regressed, ", "), scenarios, compared, units.Noun(compared, "scenario"), tail)
	}
	text := fmt.Sprintf("no regression in %d compared %s%s", compared, units.Noun(compared, "scenario"), tail)
	switch out {
	case Incomplete:
		return out, "INCOMPLETE", text
	case NotJudged:
		return out, "INCONCLUSIVE", text
	}
	return out, "OK", text
}

// mark is the headline's symbol in Markdown: only a pass gets ✅.
func (o Outcome) mark() string {
	switch o {
	case Pass:
		return "✅"
	case NotJudged:
		return "⚠️"
	}
	return "❌"
}

// WriteMarkdown writes the report as Markdown for a CI job summary or a
// pull-request comment: the outcome, the regressions, an overview table and
// every scenario's metrics in a collapsed section.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	out, label, head := r.headline()
	r.markdownHead(&b, out, label, head)
	if out == Regressed {
		r.markdownRegressions(&b)
	}
	r.markdownUnjudged(&b)
	r.markdownOverview(&b)
	b.WriteString("#### Details\n\n")
	for i := range r.Scenarios {
		if s := &r.Scenarios[i]; s.Verdict != Missing && s.Verdict != Added {
			markdownDetails(&b, s)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// markdownHead writes the headline, what the verdict cost, the two sides,
// the rule and the warnings.
func (r *Report) markdownHead(b *bytes.Buffer, out Outcome, label, head string) {
	fmt.Fprintf(b, "### %s: %s %s: %s\n\n", r.command(), out.mark(), label, markdown.Escape(head))
	for _, c := range r.Cost {
		fmt.Fprintf(b, "- **Cost**: %s\n", markdown.Escape(c))
	}
	fmt.Fprintf(b, "- **Base**: %s\n- **New**: %s\n", markdown.Escape(r.Base.describe()), markdown.Escape(r.New.describe()))
	fmt.Fprintf(b, "- **Rule**: %s Thresholds: %s\n", markdown.Escape(r.rule()), markdown.Escape(r.thresholdList()))
	if d := r.detectable(); d != "" {
		fmt.Fprintf(b, "- **Resolution**: %s\n", markdown.Escape(d))
	}
	b.WriteString("\n")
	for _, w := range r.Warnings {
		fmt.Fprintf(b, "> ⚠️ %s\n>\n", markdown.Escape(w))
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n")
	}
}

// markdownRegressions lists every regressed metric, each explained.
func (r *Report) markdownRegressions(b *bytes.Buffer) {
	b.WriteString("#### Regressions\n\n")
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		for _, m := range s.Regressions() {
			fmt.Fprintf(b, "- **%s** `%s`: %s\n", markdown.Escape(s.Name), m.Metric, markdown.Escape(m.explain()))
		}
	}
	b.WriteString("\n")
}

// markdownUnjudged lists the gated metrics that could not be judged, and
// why, when there are any.
func (r *Report) markdownUnjudged(b *bytes.Buffer) {
	unjudged := r.Unjudged()
	waived := r.WallNotJudged()
	if len(unjudged) == 0 && len(waived) == 0 {
		return
	}
	b.WriteString("#### Not judged\n\n")
	for _, u := range unjudged {
		fmt.Fprintf(b, "- **%s** `%s`: %s\n", markdown.Escape(u.Scenario), u.Metric, markdown.Escape(u.explainUnjudged()))
	}
	for _, u := range waived {
		fmt.Fprintf(b, "- **%s** `%s` (the outcome does not wait on it): %s\n", markdown.Escape(u.Scenario), u.Metric,
			markdown.Escape(u.explainUnjudged()))
	}
	b.WriteString("\n")
}

// markdownOverview writes one row per scenario with its verdict and the
// overview's metrics, and how to read the cells.
func (r *Report) markdownOverview(b *bytes.Buffer) {
	b.WriteString("#### Scenarios\n\n| Scenario | Strategy | Verdict |")
	columns := overview()
	for _, c := range columns {
		fmt.Fprintf(b, " %s |", c.Heading)
	}
	b.WriteString(" Repetitions (base → new) |\n|---|---|---|")
	for range columns {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		fmt.Fprintf(b, "| %s | %s | %s |", markdown.Escape(s.Name), markdown.Escape(s.Strategy), mdVerdict(s.Verdict))
		for _, c := range columns {
			fmt.Fprintf(b, " %s |", markdown.Escape(s.Metric(c.Name).cell()))
		}
		fmt.Fprintf(b, " %s → %s |\n", markdown.Escape(orDash(s.BaseStatus)), markdown.Escape(orDash(s.NewStatus)))
	}
	if r.Paired {
		b.WriteString("\nCells read base → new medians (change: the pairs' median ratio, shown when its 95% interval excludes no change); " +
			"~ is no significant change, ? too few pairs to tell, ? ⚠️ not judged (see above). Details show each side's median [min, max] and the change with its 95% interval.\n\n")
	} else {
		b.WriteString("\nCells read base → new (change) of the medians; ~ is no significant change, ? too few repetitions to tell, ? ⚠️ not judged (see above). " +
			"Details show the median ± its 95% confidence interval, or [min, max] of the repetitions when they are too few for one.\n\n")
	}
}

// markdownDetails writes a scenario's metrics in a collapsed section, open
// when the scenario regressed or could not be judged.
func markdownDetails(b *bytes.Buffer, s *ScenarioResult) {
	open := ""
	if s.Verdict == Regression || s.Verdict == Inconclusive {
		open = " open"
	}
	fmt.Fprintf(b, "<details%s><summary>%s: %s</summary>\n\n", open, html.EscapeString(s.Name), html.EscapeString(string(s.Verdict)))
	b.WriteString("| Metric | Base | New | Change | p | Threshold | Verdict |\n|---|---|---|---|---|---|---|\n")
	shown, zeros := splitZeros(s.Metrics)
	for _, m := range shown {
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", m.Metric,
			markdown.Escape(m.Base.describe(m)), markdown.Escape(m.New.describe(m)), markdown.Escape(m.changeText()),
			m.pText(), formatThreshold(m.Threshold), markdown.Escape(m.verdictText()))
	}
	if len(zeros) > 0 {
		fmt.Fprintf(b, "\nZero in both runs: %s.\n", markdown.Escape(strings.Join(zeros, ", ")))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(b, "\n> ⚠️ %s\n", markdown.Escape(n))
	}
	b.WriteString("\n</details>\n\n")
}

// writeTextHead writes the lines above a text report's table: the
// headline, what the verdict cost, the sides, with rules the rule, the
// thresholds and the resolution, then the warnings.
func (r *Report) writeTextHead(b *bytes.Buffer, rules bool) {
	_, label, head := r.headline()
	fmt.Fprintf(b, "%s: %s: %s\n", r.command(), label, head)
	for _, c := range r.Cost {
		fmt.Fprintf(b, "cost: %s\n", c)
	}
	fmt.Fprintf(b, "base: %s\nnew:  %s\n", r.Base.describe(), r.New.describe())
	if rules {
		fmt.Fprintf(b, "rule: %s\nthresholds: %s\n", r.rule(), r.thresholdList())
		if d := r.detectable(); d != "" {
			fmt.Fprintf(b, "resolution: %s\n", d)
		}
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(b, "warning: %s\n", w)
	}
	b.WriteString("\n")
}

// WriteText writes the report for a terminal: the outcome, warnings and
// one aligned line per scenario and metric.
func (r *Report) WriteText(w io.Writer) error {
	var b bytes.Buffer
	r.writeTextHead(&b, true)

	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMETRIC\tBASE\tNEW\tCHANGE\tP\tVERDICT")
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		name := s.Name
		if s.Verdict == Missing || s.Verdict == Added {
			fmt.Fprintf(tw, "%s\t\t%s\t%s\t\t\t%s\n", name, orDash(s.BaseStatus), orDash(s.NewStatus), s.Verdict)
			continue
		}
		shown, zeros := splitZeros(s.Metrics)
		for _, m := range shown {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, m.Metric,
				m.Base.describe(m), m.New.describe(m), m.changeText(), m.pText(), m.verdictText())
			name = ""
		}
		if len(zeros) > 0 {
			fmt.Fprintf(tw, "%s\t(zero in both: %d more)\t\t\t\t\t\n", name, len(zeros))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Notes are sentences: after the table, so they do not widen its columns.
	for i := range r.Scenarios {
		for _, n := range r.Scenarios[i].Notes {
			fmt.Fprintf(&b, "note: %s: %s\n", r.Scenarios[i].Name, n)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (r *Report) command() string {
	if r.Paired {
		return "provebench ab"
	}
	return "provebench compare"
}

// rule states how a regression is decided in this report.
func (r *Report) rule() string {
	exact := "exact figures (failures, final counters, counter peaks that repeat exactly) are compared directly, any increase failing unless a threshold allows it."
	switch {
	case r.Paired:
		return "timed figures: the ratio new/base over pairs of repetitions run back to back, with its 95% interval (Hodges–Lehmann, Wilcoxon signed-rank); " +
			"a regression only when the whole interval lies past the metric's threshold in the bad direction; " +
			"inconclusive (not judged, never a pass) when the interval holds the threshold, when too few pairs give one, " +
			"or when the host was oversubscribed for a metric on the host's clock; " + exact
	case r.GateTimed:
		return fmt.Sprintf("a regression is a significant change (Mann-Whitney U, p < %g) beyond the metric's threshold in the bad direction; ", r.Alpha) + exact
	}
	return "stored runs: only " + exact + fmt.Sprintf(" A GPU's device time per partition gates too (Mann-Whitney U, p < %g, beyond its threshold): the host's load does not move the device's clock. ", r.Alpha) +
		"Other timed figures are shown but not gated: use provebench ab for a timed gate. A gated figure the test cannot judge (too few repetitions) is inconclusive."
}

// detectable states, for ab, the smallest change of wall and CPU time per
// scenario the run could tell from noise: the half-width of the ratio's
// interval.
func (r *Report) detectable() string {
	if !r.Paired {
		return ""
	}
	var parts []string
	for _, metric := range []string{results.SecondsPerProof, results.CPUSeconds, results.DeviceSecondsPerPartition} {
		var each []string
		for i := range r.Scenarios {
			if m := r.Scenarios[i].Metric(metric); m != nil && m.Level > 0 {
				each = append(each, fmt.Sprintf("%s ±%.1f%%", r.Scenarios[i].Name, 100*m.Detectable))
			}
		}
		if len(each) > 0 {
			parts = append(parts, metric+": "+strings.Join(each, ", "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "smallest change this run could detect (half-width of the 95% interval): " + strings.Join(parts, "; ") +
		"; a regression is flagged once the whole interval is past the threshold, so from about threshold + that width"
}

// AppendMarkdown appends the Markdown report to the file at path, creating
// it if needed: the way GitHub Actions' $GITHUB_STEP_SUMMARY is written.
func (r *Report) AppendMarkdown(path string) error {
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("append report: %w", err)
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append report to %s: %w", path, err)
	}
	return nil
}

func (ri RunInfo) describe() string {
	var parts []string
	v := ri.ToolVersion
	if v == "" {
		v = "unknown version"
	}
	parts = append(parts, "provebench "+v)
	if ri.GitCommit != "" {
		parts = append(parts, "commit "+ri.GitCommit)
	}
	host := ri.Host
	if ri.CPU != "" {
		host += " (" + ri.CPU + ")"
	}
	if host != "" {
		parts = append(parts, "on "+host)
	}
	parts = append(parts, "GPUs "+ri.GPUs)
	if !ri.StartedAt.IsZero() {
		parts = append(parts, "started "+ri.StartedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if !ri.Complete {
		parts = append(parts, "INCOMPLETE")
	}
	return strings.Join(parts, ", ")
}

func (r *Report) thresholdList() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.Thresholds)) {
		parts = append(parts, k+" "+formatThreshold(r.Thresholds[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// splitZeros separates exact metrics that are zero in both runs (nothing
// failed, counters balanced) from the ones worth a row; an ungated figure
// neither run has (setup time or energy from the exec driver, without
// NVML, in older documents) gets no row: there is nothing to read.
func splitZeros(ms []MetricResult) (shown []*MetricResult, zeros []string) {
	for i := range ms {
		m := &ms[i]
		if m.Exact && m.Verdict == Same && m.Base != nil && m.Base.Center == 0 {
			zeros = append(zeros, m.Metric)
			continue
		}
		if !m.Gated() && m.Verdict == NoData && m.Base == nil && m.New == nil {
			continue
		}
		shown = append(shown, m)
	}
	return shown, zeros
}

// cell is a metric in the overview: base → new (change).
func (m *MetricResult) cell() string {
	if m == nil {
		return "—"
	}
	if m.Verdict == NoData {
		return "n/a"
	}
	delta := "~"
	switch {
	case m.Significant():
		delta = m.changeText()
		if m.Verdict == Regression {
			delta += " ❌"
		}
	case m.Verdict == Inconclusive:
		delta = "? ⚠️"
	case m.Verdict == TooFewSamples:
		delta = "?"
	}
	return fmt.Sprintf("%s → %s (%s)", m.Unit.Format(m.Base.Center), m.Unit.Format(m.New.Center), delta)
}

// explain is one sentence on a regression.
func (m *MetricResult) explain() string {
	how := "exact figures"
	switch {
	case m.Paired:
		how = fmt.Sprintf("%.1f%% interval from %d pairs", 100*m.Level, m.New.N)
	case !m.Exact:
		how = fmt.Sprintf("p=%.3f, n=%d+%d", m.P, m.Base.N, m.New.N)
	}
	return fmt.Sprintf("%s → %s (%s; %s; threshold %s)",
		m.Unit.Format(m.Base.Center), m.Unit.Format(m.New.Center), m.changeText(), how, formatThreshold(m.Threshold))
}

// explainUnjudged is one sentence on an inconclusive metric: what was
// measured and why it does not settle the question.
func (m *MetricResult) explainUnjudged() string {
	what := "no figures"
	if m.Base != nil && m.New != nil {
		what = fmt.Sprintf("%s → %s (%s)", m.Unit.Format(m.Base.Center), m.Unit.Format(m.New.Center), m.changeText())
	}
	return fmt.Sprintf("%s; threshold %s; %s", what, formatThreshold(m.Threshold), m.Note)
}

// describe is one side of a metric: median ± CI (n) or the exact figure.
func (s *Summary) describe(m *MetricResult) string {
	if s == nil {
		return "n/a"
	}
	v := m.Unit.Format(s.Center)
	if m.Exact {
		return v
	}
	switch {
	case m.Verdict == NoData || s.Min == s.Max:
		return fmt.Sprintf("%s (n=%d)", v, s.N)
	case math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0):
		// Too few repetitions for a confidence interval of the median:
		// show their range instead of benchstat's "± ∞".
		return fmt.Sprintf("%s [%s, %s] (n=%d)", v, m.Unit.Format(s.Min), m.Unit.Format(s.Max), s.N)
	}
	spread := benchmath.Summary{Center: s.Center, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
	return fmt.Sprintf("%s ± %s (n=%d)", v, spread, s.N)
}

func (m *MetricResult) changeText() string {
	if m.Base == nil || m.New == nil {
		return ""
	}
	if m.Paired && m.Level > 0 {
		return fmt.Sprintf("%s [%s, %s]", formatChange(m.Change), formatChange(m.Lo), formatChange(m.Hi))
	}
	if m.Exact && m.Unit == results.UnitCount {
		// Counts read better as a difference: failed repetitions 0 → 1 (+1).
		return fmt.Sprintf("%+g", m.New.Center-m.Base.Center)
	}
	return formatChange(m.Change)
}

func (m *MetricResult) pText() string {
	switch {
	case m.Verdict == NoData:
		return ""
	case m.Exact:
		return "exact"
	case m.Paired && m.New != nil:
		return fmt.Sprintf("%d pairs", m.New.N)
	case m.Paired:
		return ""
	}
	return fmt.Sprintf("%.3f", m.P)
}

func (m *MetricResult) verdictText() string {
	v := string(m.shownVerdict())
	if m.Note != "" {
		v += " (" + m.Note + ")"
	}
	return v
}

// shownVerdict is the verdict a reader is shown: "worse" and "better" only
// for a gated metric whose change passes its threshold; a significant
// change of an ungated metric, or one within the threshold, reads as "~"
// (issue 41: ab labelled ungated 1% differences "worse"). The change and
// its interval stay in their columns.
func (m *MetricResult) shownVerdict() Verdict {
	if (m.Verdict == Worse || m.Verdict == Better) && (!m.Gated() || math.Abs(m.Change) <= m.Threshold) {
		return Same
	}
	return m.Verdict
}

// WriteBrief writes what a terminal needs of the report: the headline,
// what the verdict cost, the sides, the warnings, and only the rows that
// decide or move the verdict (regressions, metrics not judged, gated
// changes past their threshold), each configuration's others counted on
// one line; full names where the full report is (full), which holds every
// row and note. For ab: its text report of 4 configurations ran to 363
// lines (issue 41).
func (r *Report) WriteBrief(w io.Writer, full string) error {
	var b bytes.Buffer
	r.writeTextHead(&b, false)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMETRIC\tCHANGE\tVERDICT")
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Verdict == Missing || s.Verdict == Added {
			fmt.Fprintf(tw, "%s\t\t\t%s\n", s.Name, s.Verdict)
			continue
		}
		name, quiet := s.Name, 0
		for j := range s.Metrics {
			m := &s.Metrics[j]
			switch m.shownVerdict() {
			case Regression, Inconclusive, Worse, Better, TooFewSamples:
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, m.Metric, m.changeText(), m.shownVerdict())
				name = ""
			default:
				quiet++
			}
		}
		if quiet > 0 {
			fmt.Fprintf(tw, "%s\t(%d more: ~ or no data)\t\t\n", name, quiet)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nevery metric, its interval, threshold and why it was not judged, and the notes: %s\n", full)
	_, err := w.Write(b.Bytes())
	return err
}

func formatChange(c float64) string {
	switch {
	case math.IsInf(c, 1):
		return "up from 0"
	case math.IsInf(c, -1):
		return "down from 0"
	}
	return fmt.Sprintf("%+.1f%%", 100*c)
}

func mdVerdict(v Verdict) string {
	switch v {
	case Regression:
		return "❌ **regression**"
	case Worse:
		return "⚠️ worse"
	case Better:
		return "✅ better"
	case Missing:
		return "⚠️ missing"
	case Inconclusive:
		return "⚠️ **inconclusive**"
	}
	return string(v)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
