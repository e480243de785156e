package export

import (
	"encoding/json"
	"io"

	"github.com/provebench/provebench/results"
)

// bencher writes Bencher Metric Format (BMF) JSON: an object keyed by
// benchmark (the configuration), each holding measures keyed by slug with
// value, lower_value and upper_value. Seconds per proof goes into Bencher's
// built-in latency measure, in nanoseconds as that measure counts; peak RSS
// into a measure of its own, peak-rss-bytes, which Bencher creates on first
// upload.
type bencher struct{}

func (bencher) Name() string { return "bencher" }

type bmfMetric struct {
	Value float64 `json:"value"`
	Lower float64 `json:"lower_value"`
	Upper float64 `json:"upper_value"`
}

// bencherMeasures maps the exported measures to Bencher's slugs and units.
var bencherMeasures = []struct {
	slug  string
	scale float64
}{
	{"latency", 1e9},      // seconds per proof, in nanoseconds
	{"peak-rss-bytes", 1}, // bytes
}

func (bencher) Export(w io.Writer, run *results.Run) error {
	out := map[string]map[string]bmfMetric{}
	for i := range run.Scenarios {
		sc := &run.Scenarios[i]
		for k, m := range measures {
			f, ok := summarize(sc, m)
			if !ok {
				continue
			}
			bm := bencherMeasures[k]
			if out[sc.Name] == nil {
				out[sc.Name] = map[string]bmfMetric{}
			}
			out[sc.Name][bm.slug] = bmfMetric{Value: f.median * bm.scale, Lower: f.min * bm.scale, Upper: f.max * bm.scale}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
