package predict

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/provebench/provebench/internal/markdown"
	"github.com/provebench/provebench/internal/units"
)

// WriteCSV writes one row per configuration: its family, what it is, the
// predicted and measured medians of seconds per proof and peak RSS (bytes)
// with the signed relative errors (fractions; empty when not predicted),
// and why it was not predicted.
func (cv *CrossValidation) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := []string{"family", "configuration", "files", "strategy", "constraints", "synthesis_mode", "repetitions", "calibrated_on",
		"seconds_per_proof_predicted", "seconds_per_proof_measured", "seconds_per_proof_error",
		"peak_rss_predicted_bytes", "peak_rss_measured_bytes", "peak_rss_error", "not_predicted"}
	if err := cw.Write(header); err != nil {
		return err
	}
	for i := range cv.Predictions {
		p := &cv.Predictions[i]
		pt := &p.Point
		predSPP, predRSS := "", ""
		if p.Err == "" {
			predSPP, predRSS = formatFloat(p.SecondsPerProof), strconv.FormatInt(int64(p.PeakRSS), 10)
		}
		row := []string{p.Family, pt.Scenario, strings.Join(pt.documents(), " "), string(pt.Spec.Pipeline.Strategy), strconv.Itoa(pt.Spec.Workload.Constraints),
			pt.SynthesisMode, strconv.Itoa(pt.Reps), strconv.Itoa(p.CalibratedOn),
			predSPP, formatFloat(pt.SecondsPerProof), formatFloat(p.SecondsPerProofErr()),
			predRSS, strconv.FormatInt(int64(pt.PeakRSS), 10), formatFloat(p.PeakRSSErr()), p.Err}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSummaryCSV writes the error distributions: one row per metric and
// group (all, then each strategy), |error| as fractions.
func (cv *CrossValidation) WriteSummaryCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"metric", "group", "predicted", "not_predicted", "median_abs_error", "p90_abs_error", "max_abs_error", "median_error"}); err != nil {
		return err
	}
	for _, s := range cv.Summaries() {
		row := []string{s.Metric, s.Group, strconv.Itoa(s.N), strconv.Itoa(s.Missing),
			formatFloat(s.Median), formatFloat(s.P90), formatFloat(s.Max), formatFloat(s.MedianSigned)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func formatFloat(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// WriteMarkdown writes the per-configuration table, the distributions and
// the targets' verdict (misses, from Misses; targets zero: none asked).
func (cv *CrossValidation) WriteMarkdown(w io.Writer, files []string, t Targets) error {
	var b strings.Builder
	b.WriteString("# Cross-validation of the simulator\n\n")
	fmt.Fprintf(&b, "%d configurations of %s in %d families (--family-by %s); each family predicted by a model calibrated on the others",
		len(cv.Predictions), markdown.Escape(strings.Join(files, ", ")), len(cv.Families), markdown.Escape(cv.FamilyBy.String()))
	if len(cv.Pinned) > 0 {
		fmt.Fprintf(&b, " and on %s, in every fold", markdown.Escape(strings.Join(cv.Pinned, ", ")))
	}
	b.WriteString(". ")
	b.WriteString("Measured figures are the medians of the configuration's measured repetitions; error is (predicted − measured) / measured.\n\n")
	b.WriteString(cv.Table())
	b.WriteString("\n## Error distribution (|error|)\n\n")
	b.WriteString(cv.SummaryTable())
	if st := cv.StageTable(); st != "" {
		b.WriteString("\n## Each stage's error, per family left out\n\n")
		b.WriteString(st)
	}
	if len(cv.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range cv.Notes {
			fmt.Fprintf(&b, "Note: %s.\n\n", markdown.Escape(n))
		}
	}
	b.WriteString(verdict(cv.Misses(t), t))
	_, err := io.WriteString(w, b.String())
	return err
}

// Table is the per-configuration Markdown table.
func (cv *CrossValidation) Table() string {
	var b strings.Builder
	b.WriteString("| family | configuration | size | reps | calibrated on | s/proof predicted | measured | error | peak RSS predicted | measured | error |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for i := range cv.Predictions {
		p := &cv.Predictions[i]
		pt := &p.Point
		spp, rss := "—", "—"
		if p.Err == "" {
			spp, rss = fmt.Sprintf("%.3f", p.SecondsPerProof), units.FormatBytes(int64(p.PeakRSS))
		}
		fmt.Fprintf(&b, "| %s | %s | 2^%d | %d | %d | %s | %.3f | %s | %s | %s | %s |\n",
			markdown.Escape(p.Family), markdown.Escape(pt.Scenario), bits.Len(uint(pt.Spec.Workload.Constraints))-1, pt.Reps, p.CalibratedOn,
			spp, pt.SecondsPerProof, signedOr(p.SecondsPerProofErr(), p.Err), rss, units.FormatBytes(int64(pt.PeakRSS)), signedOr(p.PeakRSSErr(), p.Err))
	}
	for i := range cv.Predictions {
		if p := &cv.Predictions[i]; p.Err != "" {
			fmt.Fprintf(&b, "\nNot predicted: %s: %s.\n", markdown.Escape(p.Point.Scenario), markdown.Escape(p.Err))
		}
	}
	return b.String()
}

// StageTable is each stage's error per family left out (StageErrors over
// the family's predicted configurations): where a family is a size
// (--family-by label:workload.constraints), how each stage's law carries
// to a size it was not fitted on. "" when nothing was predicted.
func (cv *CrossValidation) StageTable() string {
	byFamily := map[string][]Check{}
	for _, p := range cv.Predictions {
		if p.Check != nil && p.Err == "" {
			byFamily[p.Family] = append(byFamily[p.Family], *p.Check)
		}
	}
	var stages []string
	errs := map[string]map[string]StageError{}
	for _, f := range cv.Families {
		errs[f] = map[string]StageError{}
		for _, e := range StageErrors(byFamily[f]) {
			if !slices.Contains(stages, e.Stage) {
				stages = append(stages, e.Stage)
			}
			errs[f][e.Stage] = e
		}
	}
	if len(stages) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| family | " + strings.Join(stages, " | ") + " |\n|---|" + strings.Repeat("--:|", len(stages)) + "\n")
	for _, f := range cv.Families {
		b.WriteString("| " + markdown.Escape(f) + " |")
		for _, st := range stages {
			cell := "—"
			if e, ok := errs[f][st]; ok {
				cell = signedPercent(e.Median)
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n(each stage's median signed error over the family's configurations, predicted by a model calibrated without them; the device stages on the device's own clock where recorded.)\n")
	return b.String()
}

// SummaryTable is the distributions' Markdown table.
func (cv *CrossValidation) SummaryTable() string {
	var b strings.Builder
	b.WriteString("| metric | strategy | predicted | not predicted | median | p90 | max | median signed |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|\n")
	for _, s := range cv.Summaries() {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %s |\n", s.Metric, markdown.Escape(s.Group), s.N, s.Missing,
			percent(s.Median), percent(s.P90), percent(s.Max), signedPercent(s.MedianSigned))
	}
	b.WriteString("\n(p90: the least |error| that 90% of the configurations stay within, nearest rank.)\n")
	return b.String()
}

// percent writes a fraction as a percentage.
func percent(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	if math.Abs(v) >= maxPrintedFraction {
		return fmt.Sprintf("%.3g%%", 100*v)
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

// maxPrintedFraction is where a percentage turns to three significant
// figures: an error of 10^300 (a measurement of 10^-300 s) is no figure
// to print in full, 307 characters wide.
const maxPrintedFraction = 1e4

// signedOr writes a signed error as a percentage, or "not predicted".
func signedOr(v float64, why string) string {
	if why != "" {
		return "not predicted"
	}
	return signedPercent(v)
}

func signedPercent(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	if math.Abs(v) >= maxPrintedFraction {
		return fmt.Sprintf("%+.3g%%", 100*v)
	}
	return fmt.Sprintf("%+.1f%%", 100*v)
}

// verdict says whether the targets were met.
func verdict(misses []string, t Targets) string {
	if t.P90 <= 0 && t.Max <= 0 {
		return ""
	}
	goal := targetPhrase(t)
	if len(misses) == 0 {
		return fmt.Sprintf("\n**Targets met** (%s, for every metric).\n", goal)
	}
	return fmt.Sprintf("\n**Targets missed** (%s): %s.\n", goal, strings.Join(misses, "; "))
}

// targetPhrase says the targets in words.
func targetPhrase(t Targets) string {
	var parts []string
	if t.P90 > 0 {
		parts = append(parts, fmt.Sprintf("p90 |error| ≤ %.1f%%", 100*t.P90))
	}
	if t.Max > 0 {
		parts = append(parts, fmt.Sprintf("max |error| ≤ %.1f%%", 100*t.Max))
	}
	return strings.Join(parts, ", ")
}

// Print writes the cross-validation to the terminal: what was predicted
// from what (families by by, and the documents pinned in every fold's
// calibration), the error table and its distribution.
func (cv *CrossValidation) Print(w io.Writer, by FamilyBy, pinned []string) {
	always := ""
	if len(pinned) > 0 {
		always = fmt.Sprintf(" and on the %s always", strings.Join(pinned, ", "))
	}
	fmt.Fprintf(w, "cross-validation: %d configurations in %d families (--family-by %s), each predicted by a model calibrated on the others%s\n\n",
		len(cv.Predictions), len(cv.Families), by, always)
	fmt.Fprint(w, cv.Table())
	fmt.Fprintln(w)
	fmt.Fprint(w, cv.SummaryTable())
	if st := cv.StageTable(); st != "" {
		fmt.Fprintln(w)
		fmt.Fprint(w, st)
	}
}
