package main

import (
	"fmt"
	"io"

	"github.com/provebench/provebench/bench"
	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/bench/simulate"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/scenarios"
)

// runSearch simulates every configuration and prints the Pareto front of
// throughput against peak memory, and the fastest under the memory cap.
func runSearch(w io.Writer, specs []bench.Spec, m *simulate.Model, env results.Environment, capText string) error {
	var memCap int64
	if capText != "" {
		var err error
		if memCap, err = scenarios.ParseSize(capText); err != nil {
			return usagef("--memory-cap: %v", err)
		}
	}
	found, err := simulate.Search(specs, m, int64(env.MemoryBytes))
	if err != nil {
		return usageError{err}
	}
	front := simulate.Front(found)
	fmt.Fprintf(w, "%d configurations simulated; Pareto front of throughput against peak RSS:\n\n", len(found))
	fmt.Fprintf(w, "%-60s %10s %12s\n", "configuration", "s/proof", "peak RSS")
	for _, c := range front {
		fmt.Fprintf(w, "%-60s %10.2f %12s\n", c.Name, c.SecondsPerProof, units.FormatBytes(c.PeakRSS))
	}
	if memCap > 0 {
		best, ok := simulate.Best(found, memCap)
		if !ok {
			fmt.Fprintf(w, "\nno configuration stays under %s\n", units.FormatBytes(memCap))
			return nil
		}
		fmt.Fprintf(w, "\nfastest under %s: %s at %.2f s/proof, peak RSS %s\n", units.FormatBytes(memCap), best.Name, best.SecondsPerProof, units.FormatBytes(best.PeakRSS))
	}
	return nil
}
