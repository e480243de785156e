package reports

import (
	"fmt"
	"io"
	"slices"

	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

// PrintRunSummary prints the terminal summary of run, merge and simulate:
// the figures the report's summary table has, the same way (medians over
// the measured repetitions with their range), and the files written.
func PrintRunSummary(w io.Writer, doc *results.Run, files []string) {
	fmt.Fprintln(w)
	// The name column is as wide as the longest name, so that matrix
	// names (strategy=hold/permits=4/...) keep the figures aligned.
	nw := len("configuration")
	for _, sc := range doc.Scenarios {
		nw = max(nw, len(sc.Name))
	}
	fmt.Fprintf(w, "%-*s %8s %22s %22s %28s\n", nw, "configuration", "ok/runs", "partitions/s", "s/proof", "peak RSS")
	for _, sc := range doc.Scenarios {
		var n int
		var pps, spp, rss []float64
		for _, r := range sc.Repetitions {
			if r.Warmup {
				continue
			}
			n++
			if r.Status != results.StatusOK {
				continue
			}
			pps = append(pps, r.PartitionsPerSecond)
			spp = append(spp, r.SecondsPerProof)
			rss = append(rss, float64(r.PeakRSSBytes))
		}
		fmt.Fprintf(w, "%-*s %8s %22s %22s %28s\n", nw, sc.Name, fmt.Sprintf("%d/%d", len(pps), n),
			spreadText(pps, func(v float64) string { return fmt.Sprintf("%.3g", v) }),
			spreadText(spp, func(v float64) string { return fmt.Sprintf("%.3g", v) }),
			spreadText(rss, func(v float64) string { return units.FormatBytes(int64(v)) }))
	}
	fmt.Fprintln(w, "\n(medians over measured repetitions, the range in brackets; peak RSS is the kernel's whole peak, the binary's own pages included)")
	printLoadSkews(w, doc)
	if n, what := results.Unfinished(doc); n > 0 && doc.Simulated == nil { // a prediction of memory-limit is no failure
		fmt.Fprintf(w, "%s did not finish (%s): exit status 1\n", units.Plural(n, "repetition"), what)
	}
	results.PrintWritten(w, files)
}

// printLoadSkews warns of the configurations measured under a different
// host load than the rest, with the figures, so that none is ranked on
// the host's doing.
func printLoadSkews(w io.Writer, doc *results.Run) {
	skews := results.LoadSkews(doc)
	if len(skews) == 0 {
		return
	}
	fmt.Fprintln(w, "host load differed between configurations: their timed figures (partitions/s, s/proof) are the host's as much as theirs:")
	for _, s := range skews {
		fmt.Fprintf(w, "  %s: %s\n", s.Scenario, s)
	}
	if doc.RunOrder != results.RunOrderInterleaved {
		fmt.Fprintln(w, "  (the repetitions ran one configuration after another: interleaving, run's default, spreads the load over all)")
	}
}

// spreadText writes "median (min–max)", or "-" for no values.
func spreadText(v []float64, format func(float64) string) string {
	if len(v) == 0 {
		return "-"
	}
	slices.Sort(v)
	med := stats.Median(v)
	if len(v) == 1 {
		return format(med)
	}
	return fmt.Sprintf("%s (%s–%s)", format(med), format(v[0]), format(v[len(v)-1]))
}
