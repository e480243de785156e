package simulate

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/provebench/provebench/bench"
	"github.com/provebench/provebench/pipeline/sim"
)

// Candidate is one configuration's prediction in a search.
type Candidate struct {
	Name            string
	SecondsPerProof float64
	PeakRSS         int64
	// OOM: the configuration runs out of the host's memory (or its
	// memory_limit); it is never on the front nor the best.
	OOM bool
}

// Search simulates every spec without timelines: hundreds of
// configurations in seconds.
func Search(specs []bench.Spec, m *Model, hostMemory int64) ([]Candidate, error) {
	out := make([]Candidate, 0, len(specs))
	for i := range specs {
		o, err := Options(&specs[i], m, hostMemory)
		if err != nil {
			return nil, err
		}
		res, err := sim.Run(o)
		if err != nil {
			return nil, fmt.Errorf("scenario %s (%s): %w", specs[i].Name, specs[i].Source, err)
		}
		c := Candidate{Name: specs[i].Name, PeakRSS: res.PeakRSS, OOM: res.OOM != nil}
		if res.Report.ProofsDone > 0 {
			c.SecondsPerProof = res.Report.Wall.Seconds() / float64(res.Report.ProofsDone)
		}
		out = append(out, c)
	}
	return out, nil
}

// Front is the Pareto front of the configurations that fit: none of them
// is both slower and bigger than another. Sorted by peak RSS.
func Front(cs []Candidate) []Candidate {
	fit := slices.DeleteFunc(slices.Clone(cs), func(c Candidate) bool { return c.OOM || c.SecondsPerProof == 0 })
	slices.SortFunc(fit, func(a, b Candidate) int {
		if c := cmp.Compare(a.PeakRSS, b.PeakRSS); c != 0 {
			return c
		}
		return cmp.Compare(a.SecondsPerProof, b.SecondsPerProof)
	})
	var front []Candidate
	for _, c := range fit {
		if len(front) == 0 || c.SecondsPerProof < front[len(front)-1].SecondsPerProof {
			front = append(front, c)
		}
	}
	return front
}

// Best is the fastest configuration whose peak stays at or under memCap.
func Best(cs []Candidate, memCap int64) (Candidate, bool) {
	var best Candidate
	ok := false
	for _, c := range cs {
		if c.OOM || c.SecondsPerProof == 0 || c.PeakRSS > memCap {
			continue
		}
		if !ok || c.SecondsPerProof < best.SecondsPerProof {
			best, ok = c, true
		}
	}
	return best, ok
}
