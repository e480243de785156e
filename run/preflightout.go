package run

import (
	"fmt"
	"io"

	"github.com/provebench/provebench/internal/units"
)

// PrintChecks says in one line per basis what the pre-flight check held
// the configurations to: how many, and the largest peak.
func PrintChecks(w io.Writer, checks []Check) {
	var bases []string
	largest := map[string]Check{}
	count := map[string]int{}
	for _, c := range checks {
		if _, ok := count[c.Basis]; !ok {
			bases = append(bases, c.Basis)
		}
		count[c.Basis]++
		if c.PeakRSS >= largest[c.Basis].PeakRSS {
			largest[c.Basis] = c
		}
	}
	for _, b := range bases {
		l := largest[b]
		if b == NoEstimateBasis {
			fmt.Fprintf(w, "pre-flight: %s not estimated (%s)\n", units.Plural(count[b], "configuration"), b)
			continue
		}
		what := fmt.Sprintf("%d configurations up to", count[b])
		if count[b] == 1 {
			what = "1 configuration,"
		}
		fmt.Fprintf(w, "pre-flight: %s %s of peak RSS (%s), %s\n", what, units.FormatBytes(l.PeakRSS), l.Name, b)
	}
}
