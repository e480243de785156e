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
