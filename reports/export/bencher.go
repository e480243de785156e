package export

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/provebench/provebench/results"
)

// bencher writes Bencher Metric Format (BMF) JSON: an object keyed by
// benchmark (the configuration), each holding measures keyed by slug with
// value, lower_value and upper_value. Seconds per proof goes into Bencher's
// built-in latency measure, in nanoseconds as that measure counts; every
// other metric into a measure of its own, slugged from its name (peak RSS:
// peak-rss-bytes), which Bencher creates on first upload.
type bencher struct{}

func (bencher) Name() string { return "bencher" }

type bmfMetric struct {
	Value float64 `json:"value"`
	Lower float64 `json:"lower_value"`
	Upper float64 `json:"upper_value"`
}

// bencherMeasure is a metric's Bencher slug and the factor its values are
// scaled by.
func bencherMeasure(m results.Metric) (slug string, scale float64) {
	if m.Name == results.SecondsPerProof {
		return "latency", 1e9 // Bencher's built-in measure counts nanoseconds
	}
	return strings.ReplaceAll(m.Name, "_", "-"), 1
}

func (bencher) Export(w io.Writer, run *results.Run) error {
	out := map[string]map[string]bmfMetric{}
	for i := range run.Scenarios {
		sc := &run.Scenarios[i]
		for _, m := range measures() {
			f, ok := summarize(sc, m)
			if !ok {
				continue
			}
			slug, scale := bencherMeasure(m)
			if out[sc.Name] == nil {
				out[sc.Name] = map[string]bmfMetric{}
			}
			out[sc.Name][slug] = bmfMetric{Value: f.median * scale, Lower: f.min * scale, Upper: f.max * scale}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
