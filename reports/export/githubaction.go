package export

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/provebench/provebench/results"
)

// githubAction writes github-action-benchmark's customSmallerIsBetter
// format: a JSON array of {name, unit, value, range, extra}, one entry per
// configuration and measure. The action charts value over commits; range
// and extra show in its tooltips.
type githubAction struct{}

func (githubAction) Name() string { return "github-action-benchmark" }

type gabEntry struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	Range string  `json:"range,omitempty"`
	Extra string  `json:"extra,omitempty"`
}

func (githubAction) Export(w io.Writer, run *results.Run) error {
	entries := []gabEntry{}
	for i := range run.Scenarios {
		sc := &run.Scenarios[i]
		for _, m := range measures() {
			f, ok := summarize(sc, m)
			if !ok {
				continue
			}
			entries = append(entries, gabEntry{
				Name:  sc.Name + " - " + m.Label,
				Unit:  string(m.Unit),
				Value: f.median,
				Range: fmt.Sprintf("%.6g .. %.6g", f.min, f.max),
				Extra: fmt.Sprintf("median of %d repetitions; strategy %s, backend %s", f.n, sc.Strategy, sc.Backend),
			})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(entries)
}
