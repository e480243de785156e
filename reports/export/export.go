// Package export writes a run's figures in the formats that benchmark
// dashboards read, one file per format (as hyperfine's export/): each format
// is an Exporter in its own file, reading the results document only.
//
// Every format carries, per configuration, the median over the measured
// repetitions of each metric the metric table marks Exported (seconds per
// proof and the kernel's peak RSS: time and peak memory side by side,
// both smaller-is-better), with the range of the repetitions where the
// format has room for it.
package export

import (
	"fmt"
	"io"
	"slices"

	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/results"
)

// Exporter writes a run in one format.
type Exporter interface {
	// Name is the format's name on the command line.
	Name() string
	Export(w io.Writer, run *results.Run) error
}

// Exporters are the formats, by name.
func Exporters() []Exporter {
	return []Exporter{githubAction{}, bencher{}}
}

// ByName returns the named format, or an error listing the known ones.
func ByName(name string) (Exporter, error) {
	var names []string
	for _, e := range Exporters() {
		if e.Name() == name {
			return e, nil
		}
		names = append(names, e.Name())
	}
	return nil, fmt.Errorf("unknown export format %q (known: %v)", name, names)
}

// figure is one metric of one configuration over its measured
// repetitions.
type figure struct {
	median, min, max float64
	n                int
}

// measures are the metrics every format exports: the metric table's
// Exported ones, in its order.
func measures() []results.Metric { return results.MetricsFor(results.Exported) }

// summarize returns a metric's figure over a scenario's measured
// repetitions; false when no measured repetition has it.
func summarize(sc *results.Scenario, m results.Metric) (figure, bool) {
	v := sc.Values(m)
	if len(v) == 0 {
		return figure{}, false
	}
	slices.Sort(v)
	return figure{median: stats.Median(v), min: v[0], max: v[len(v)-1], n: len(v)}, true
}
