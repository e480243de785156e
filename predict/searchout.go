package predict

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/provebench/provebench/internal/markdown"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

// SearchReport is what a search found, for its writers.
type SearchReport struct {
	Candidates []Candidate // every configuration, in the order searched
	Front      []Candidate // Front(Candidates)
	MemoryCap  int64       // 0: no cap asked for
	// Best is the fastest under MemoryCap (without a cap, the fastest that
	// does not run out of memory); nil when none fits.
	Best *Candidate
	// Scenarios are the files searched; Calibration the results documents
	// the stage costs were fitted to (none: the scenarios' own costs).
	Scenarios, Calibration []string
}

// NewSearchReport computes the front and the best under memCap (0: no
// cap).
func NewSearchReport(found []Candidate, memCap int64, scenarios, calibration []string) *SearchReport {
	r := &SearchReport{Candidates: found, Front: Front(found), MemoryCap: memCap, Scenarios: scenarios, Calibration: calibration}
	limit := memCap
	if limit <= 0 {
		limit = math.MaxInt64
	}
	if best, ok := Best(found, limit); ok {
		r.Best = &best
	}
	return r
}

// Calibrated says where the stage costs came from, in a phrase.
func (r *SearchReport) Calibrated() string {
	if len(r.Calibration) == 0 {
		return "stage costs as the scenarios write them (no calibration)"
	}
	return "calibrated on " + strings.Join(r.Calibration, ", ")
}

// WriteCSV writes one row per configuration: its name, the predicted
// seconds per proof (empty when no proof ended), peak RSS in bytes, whether
// it runs out of memory and is on the front, then one column per matrix
// axis of any configuration (empty where it has none), as written.
func (r *SearchReport) WriteCSV(w io.Writer) error {
	front := make(map[string]bool, len(r.Front))
	for _, c := range r.Front {
		front[c.Name] = true
	}
	axes := make(map[string]bool)
	for _, c := range r.Candidates {
		for k := range c.Spec.Labels {
			axes[k] = true
		}
	}
	axisNames := slices.Sorted(maps.Keys(axes))
	cw := csv.NewWriter(w)
	header := append([]string{"configuration", results.SecondsPerProof, results.PeakRSSBytes, "oom", "front"}, axisNames...)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, c := range r.Candidates {
		spp := ""
		if c.SecondsPerProof > 0 {
			spp = strconv.FormatFloat(c.SecondsPerProof, 'f', 4, 64)
		}
		row := []string{c.Name, spp, strconv.FormatInt(c.PeakRSS, 10), strconv.FormatBool(c.OOM), strconv.FormatBool(front[c.Name])}
		for _, a := range axisNames {
			row = append(row, c.Spec.Labels[a])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteMarkdown writes the front as a Markdown table, what was searched,
// and the best under the cap.
func (r *SearchReport) WriteMarkdown(w io.Writer) error {
	oom := 0
	for _, c := range r.Candidates {
		if c.OOM {
			oom++
		}
	}
	var b strings.Builder
	b.WriteString("# Predicted Pareto front of throughput against peak RSS\n\n")
	fmt.Fprintf(&b, "%s of %s simulated, %s; %d run out of memory. ",
		units.Plural(len(r.Candidates), "configuration"), markdown.Escape(strings.Join(r.Scenarios, ", ")), markdown.Escape(r.Calibrated()), oom)
	b.WriteString("On the front, no other configuration is both faster and smaller.\n\n")
	b.WriteString("| configuration | s/proof | peak RSS |\n|---|--:|--:|\n")
	for _, c := range r.Front {
		fmt.Fprintf(&b, "| %s | %.2f | %s |\n", markdown.Escape(c.Name), c.SecondsPerProof, units.FormatBytes(c.PeakRSS))
	}
	switch {
	case r.Best != nil && r.MemoryCap > 0:
		fmt.Fprintf(&b, "\nFastest under %s: **%s**, %.2f s/proof, peak RSS %s.\n",
			units.FormatBytes(r.MemoryCap), markdown.Escape(r.Best.Name), r.Best.SecondsPerProof, units.FormatBytes(r.Best.PeakRSS))
	case r.Best != nil:
		fmt.Fprintf(&b, "\nFastest: **%s**, %.2f s/proof, peak RSS %s.\n",
			markdown.Escape(r.Best.Name), r.Best.SecondsPerProof, units.FormatBytes(r.Best.PeakRSS))
	case r.MemoryCap > 0:
		fmt.Fprintf(&b, "\nNo configuration stays under %s.\n", units.FormatBytes(r.MemoryCap))
	default:
		b.WriteString("\nEvery configuration runs out of memory.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Trust is how far to trust a calibrated search's predictions: the
// model's in-sample error and its warnings. A nil *Trust is a search
// without a calibration: the scenarios' own costs have no error to show.
type Trust struct {
	InSample InSample
	Warnings []string
}

// TrustOf is m's trust on a host of hostMemory bytes (nil for a nil
// model).
func TrustOf(m *Model, hostMemory int64) (*Trust, error) {
	if m == nil {
		return nil, nil
	}
	in, err := m.InSample(hostMemory)
	if err != nil {
		return nil, err
	}
	return &Trust{InSample: in, Warnings: m.Warnings()}, nil
}

// Print writes the front and the best to the terminal, each prediction
// beside the model's in-sample error where t has one.
func (r *SearchReport) Print(w io.Writer, t *Trust) {
	fmt.Fprintf(w, "%s simulated; Pareto front of throughput against peak RSS:\n\n", units.Plural(len(r.Candidates), "configuration"))
	width := 60
	for _, c := range r.Front {
		width = max(width, len(c.Name))
	}
	if t == nil {
		fmt.Fprintf(w, "%-*s %10s %12s\n", width, "configuration", "s/proof", "peak RSS")
		for _, c := range r.Front {
			fmt.Fprintf(w, "%-*s %10.2f %12s\n", width, c.Name, c.SecondsPerProof, units.FormatBytes(c.PeakRSS))
		}
	} else {
		sp, rss := t.InSample.SecondsPerProof.Range(), t.InSample.PeakRSS.Range()
		fmt.Fprintf(w, "%-*s %10s %16s %12s %16s\n", width, "configuration", "s/proof", "in-sample error", "peak RSS", "in-sample error")
		for _, c := range r.Front {
			fmt.Fprintf(w, "%-*s %10.2f %16s %12s %16s\n", width, c.Name, c.SecondsPerProof, sp, units.FormatBytes(c.PeakRSS), rss)
		}
		fmt.Fprintf(w, "\n%s\n", t.InSample)
		PrintWarnings(w, t.Warnings)
	}
	if r.Best == nil {
		if r.MemoryCap > 0 {
			fmt.Fprintf(w, "\n%s\n", r.NoBest())
		}
		return
	}
	fmt.Fprintf(w, "\nfastest %s: %s at %.2f s/proof, peak RSS %s%s\n", r.capPhrase(), r.Best.Name, r.Best.SecondsPerProof, units.FormatBytes(r.Best.PeakRSS), t.beside())
}

// beside is the in-sample error as it follows a prediction ("" without a
// calibration).
func (t *Trust) beside() string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf(" (in-sample error: s/proof %s, peak RSS %s)", t.InSample.SecondsPerProof.Range(), t.InSample.PeakRSS.Range())
}

// capPhrase says what the best had to fit.
func (r *SearchReport) capPhrase() string {
	if r.MemoryCap > 0 {
		return "under " + units.FormatBytes(r.MemoryCap)
	}
	return "that does not run out of memory"
}

// NoBest says why there is no best: nothing fits the cap, or everything
// runs out of memory.
func (r *SearchReport) NoBest() string {
	if r.MemoryCap > 0 {
		return "no configuration stays under " + units.FormatBytes(r.MemoryCap)
	}
	return "every configuration runs out of memory"
}

// BestComment is the head of the best configuration's scenario file,
// written to path by provebench version: what predicted it, the
// prediction, the model's warnings, and the commands that check it.
func (r *SearchReport) BestComment(path, version string, t *Trust) string {
	best := r.Best
	comment := fmt.Sprintf(`%s: the fastest %s of %d configurations
that provebench %s simulate --search predicted, over %s,
%s.
Predicted: %.2f s per proof, peak RSS %s (%d bytes)%s.`,
		best.Name, r.capPhrase(), len(r.Candidates), version, strings.Join(r.Scenarios, ", "),
		r.Calibrated(), best.SecondsPerProof, units.FormatBytes(best.PeakRSS), best.PeakRSS, t.beside())
	if t != nil {
		for _, warning := range t.Warnings {
			comment += "\nWarning: " + warning + "."
		}
	}
	comment += fmt.Sprintf("\nEvery setting is explicit. Run it to check the prediction:\n  provebench run %s -o out/best", path)
	if len(r.Calibration) > 0 {
		comment += fmt.Sprintf("\n  provebench simulate %s --calibration %s --check out/best -o out/best-sim",
			path, strings.Join(r.Calibration, ","))
	}
	return comment
}
