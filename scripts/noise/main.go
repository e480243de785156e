// Command noise tells where identical repetitions differ: for each
// configuration of the results documents given, the spread of its
// measured repetitions' figures (the largest over the smallest, and the
// coefficient of variation) for the figures the gate judges and for the
// mechanisms behind them: each stage's median time, the CPU time's split
// (the Go collector, the busiest thread, the threads by name), the
// context switches and the host's neighbours. A mechanism whose spread
// matches the CPU time's, and moves with it (its correlation over the
// repetitions), is where the noise comes from.
//
//	go run ./scripts/noise docs/results/h200-gate/noise-block/results.json.gz ...
package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"text/tabwriter"

	"gonum.org/v1/gonum/stat"

	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/results"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: noise RESULTS...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		doc, err := results.Read(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "noise:", err)
			os.Exit(2)
		}
		for i := range doc.Scenarios {
			report(path, &doc.Scenarios[i])
		}
	}
}

// figure is one figure of a repetition, absent (ok false) where the
// repetition lacks it.
type figure struct {
	name string
	get  func(r *results.Repetition) (float64, bool)
}

func report(path string, sc *results.Scenario) {
	reps := sc.Measured()
	if len(reps) < 2 {
		return
	}
	fmt.Printf("%s: %s, %d measured repetitions\n", path, sc.Name, len(reps))
	figures := figuresOf(reps)
	cpu := values(reps, figures[0].get)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tmedian\tmin\tmax\tmax/min\tcv\tcorr with cpu\t")
	for _, f := range figures {
		v := values(reps, f.get)
		if v == nil {
			continue
		}
		sorted := slices.Sorted(slices.Values(v))
		ratio := math.NaN()
		if sorted[0] > 0 {
			ratio = sorted[len(sorted)-1] / sorted[0]
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%.4g\t%.3f\t%.1f%%\t%+.2f\t\n", f.name, stats.Median(sorted), sorted[0], sorted[len(sorted)-1],
			ratio, 100*cv(v), correlation(cpu, v))
	}
	tw.Flush()
	fmt.Println()
}

// figuresOf lists the figures: the run's CPU time first (what the others
// are correlated with), the gate's timed figures, the stages' medians,
// the CPU split.
func figuresOf(reps []*results.Repetition) []figure {
	metric := func(name string) figure {
		m := results.MetricOf(name)
		return figure{m.Name, m.Value}
	}
	fs := []figure{
		{"run_cpu_seconds", func(r *results.Repetition) (float64, bool) { return ptr(r.RunCPUSeconds) }},
		metric(results.SecondsPerProof),
		metric(results.DeviceSecondsPerPartition),
		metric(results.CPUUserSeconds),
		metric(results.CPUSystemSeconds),
		{"others_cpu_fraction", func(r *results.Repetition) (float64, bool) {
			if r.HostLoad == nil {
				return 0, false
			}
			return ptr(r.HostLoad.OthersCPUFraction)
		}},
	}
	stages := map[string]bool{}
	for _, r := range reps {
		for name := range r.Stages {
			stages[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(stages)) {
		fs = append(fs, figure{"stage " + name + " p50", func(r *results.Repetition) (float64, bool) {
			st, ok := r.Stages[name]
			return st.P50Seconds, ok && st.Count > 0
		}})
	}
	split := func(name string, get func(b *results.CPUBreakdown) float64) figure {
		return figure{name, func(r *results.Repetition) (float64, bool) {
			if r.CPUBreakdown == nil {
				return 0, false
			}
			return get(r.CPUBreakdown), true
		}}
	}
	fs = append(fs,
		split("gc_seconds", func(b *results.CPUBreakdown) float64 { return b.GCSeconds }),
		split("busiest_thread_seconds", func(b *results.CPUBreakdown) float64 { return b.BusiestThreadSeconds }),
		split("voluntary_switches", func(b *results.CPUBreakdown) float64 { return float64(b.VoluntarySwitches) }),
		split("involuntary_switches", func(b *results.CPUBreakdown) float64 { return float64(b.InvoluntarySwitches) }),
	)
	threads := map[string]bool{}
	for _, r := range reps {
		if r.CPUBreakdown != nil {
			for name := range r.CPUBreakdown.Threads {
				threads[name] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(threads)) {
		fs = append(fs, split("threads "+name, func(b *results.CPUBreakdown) float64 { return b.Threads[name] }))
	}
	return fs
}

// values is a figure over the repetitions; nil when any lacks it.
func values(reps []*results.Repetition, get func(*results.Repetition) (float64, bool)) []float64 {
	out := make([]float64, 0, len(reps))
	for _, r := range reps {
		v, ok := get(r)
		if !ok {
			return nil
		}
		out = append(out, v)
	}
	return out
}

func ptr(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// cv is the coefficient of variation (the sample standard deviation over
// the mean).
func cv(v []float64) float64 {
	m, sd := stat.MeanStdDev(v, nil)
	if m == 0 {
		return math.NaN()
	}
	return sd / m
}

// correlation is Pearson's r between two figures over the repetitions;
// NaN when either is constant or there are fewer than 3.
func correlation(a, b []float64) float64 {
	if len(a) != len(b) || len(a) < 3 {
		return math.NaN()
	}
	return stat.Correlation(a, b, nil)
}
