package predict

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/provebench/provebench/sim"
	"github.com/provebench/provebench/spec"
)

// Candidate is one configuration's prediction in a search.
type Candidate struct {
	Name            string
	SecondsPerProof float64
	PeakRSS         int64
	// OOM: the configuration runs out of the host's memory (or its
	// memory_limit); it is never on the front nor the best.
	OOM bool
	// Spec is the configuration, in the slice given to Search.
	Spec *spec.Spec
}

// Search simulates every spec without timelines, on every core, and
// returns the predictions in the order of specs: hundreds of
// configurations in seconds. The first error stops it.
func Search(ctx context.Context, specs []spec.Spec, m *Model, hostMemory int64) ([]Candidate, error) {
	out := make([]Candidate, len(specs))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range specs {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			c, err := predict(&specs[i], m, hostMemory)
			out[i] = c
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// predict simulates one configuration.
func predict(spec *spec.Spec, m *Model, hostMemory int64) (Candidate, error) {
	o, err := Options(spec, m, hostMemory)
	if err != nil {
		return Candidate{}, err
	}
	res, err := sim.Run(o)
	if err != nil {
		return Candidate{}, fmt.Errorf("scenario %s (%s): %w", spec.Name, spec.Source, err)
	}
	c := Candidate{Name: spec.Name, PeakRSS: res.PeakRSS, OOM: res.OOM != nil, Spec: spec}
	if res.Report.ProofsDone > 0 {
		c.SecondsPerProof = res.Report.Wall.Seconds() / float64(res.Report.ProofsDone)
	}
	return c, nil
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
