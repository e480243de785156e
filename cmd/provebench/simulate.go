package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/bench"
	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/bench/simulate"
)

type simulateFlags struct {
	out          string
	calibration  []string
	explain      bool
	noReport     bool
	filter       string
	search       bool
	memoryCap    string
	bestScenario string
	check        []string
	format       resultsFormatFlag
}

func newSimulateCmd() *cobra.Command {
	var f simulateFlags
	c := &cobra.Command{
		Use:   "simulate SCENARIO...",
		Short: "Predict scenarios in virtual time, calibrated from real runs",
		Long: `simulate plays every configuration of the scenario files through the
pipeline's own strategy gates on a virtual clock, in milliseconds even for
batches of 2^27-constraint proofs, and writes the predictions as a results
document of the usual schema (marked simulated, naming its calibration), with
the usual report and plots.

Stage costs come from --calibration: results documents of ordinary runs on one
host and backend, to which simulate fits per-stage cost laws across sizes
(synthesis against constraints x rounds on the host's cores, gpu_start and the
MSMs against constraints) and the memory baseline (runtime and key against
constraints, RSS per live dataset byte). A scenario's simulate block can write
costs and the host directly (for systems provebench cannot run) or override
the calibration's (host memory, cores, devices, GPU speed). A configuration
whose predicted RSS passes its memory_limit or the host's memory is reported
as a memory-limit repetition with the time and counters at that moment.

--explain prints the fitted model and its error on the calibration runs;
--check RESULTS.json prints the prediction of each configuration of other
real runs beside what they measured.
--search prints the predicted Pareto front of throughput against peak memory
and the fastest configuration under --memory-cap, over every configuration
of the files (matrix axes may be ranges, such as {from: 4, to: 18, step: 2}:
hundreds of configurations in seconds); with -o it writes DIR/search.csv (every
configuration's prediction) and DIR/search-front.md (the front), and
--best-scenario FILE writes the fastest under the cap as a scenario file that
provebench run runs as is.`,
		Example: `  provebench simulate scenarios/cuzk-phase12.yaml -o out/cuzk
  provebench simulate scenarios/backpressure.yaml --calibration out/cal/results.json -o out/sim --explain
  provebench simulate scenarios/cuzk-phase12.yaml --search --memory-cap 480GiB
  provebench simulate docs/results/cuzk-phase12-search.yaml --search --memory-cap 480GiB -o out/search --best-scenario out/best.yaml`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSimulate(cmd.Context(), cmd.OutOrStdout(), args, f)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "output directory (default out/simulate-<date>-<time>; with --search, none: print only)")
	fl.StringSliceVar(&f.calibration, "calibration", nil, "results.json of real runs to fit stage costs to (repeat or comma-separate)")
	fl.BoolVar(&f.explain, "explain", false, "print the fitted model and its error on the calibration runs")
	fl.BoolVar(&f.noReport, "no-report", false, "write results only, no report or plots")
	fl.StringVar(&f.filter, "filter", "", "simulate only configurations whose name matches this regular expression")
	fl.BoolVar(&f.search, "search", false, "print the Pareto front of throughput against peak memory and the best configuration under --memory-cap; with -o, write search.csv and search-front.md there")
	f.format.register(fl)
	fl.StringSliceVar(&f.check, "check", nil, "results.json of real runs not used for calibration: print each configuration's prediction beside its measurement (Markdown)")
	fl.StringVar(&f.memoryCap, "memory-cap", "", "with --search: the peak RSS the best configuration must stay under (such as 480GiB)")
	fl.StringVar(&f.bestScenario, "best-scenario", "", "with --search: write the fastest configuration under --memory-cap to this scenario file, every setting explicit, for provebench run")
	return c
}

func runSimulate(ctx context.Context, w io.Writer, args []string, f simulateFlags) error {
	if f.bestScenario != "" && !f.search {
		return usagef("--best-scenario needs --search")
	}
	specs, err := loadSpecs(args)
	if err != nil {
		return usageError{err}
	}
	specs, err = applyRunFlags(specs, runFlags{filter: f.filter, warmups: -1})
	if err != nil {
		return err
	}
	var model *simulate.Model
	env := results.Environment{Hostname: "simulated", OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}
	if len(f.calibration) > 0 {
		if model, err = simulate.Calibrate(f.calibration); err != nil {
			return usageError{err}
		}
		env = model.Environment
	}
	if f.explain {
		if model == nil {
			return usagef("--explain needs --calibration")
		}
		if err := model.Explain(w, int64(env.MemoryBytes)); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	for _, file := range f.check {
		if model == nil {
			return usagef("--check needs --calibration")
		}
		checks, err := model.CheckDocument(file, int64(env.MemoryBytes))
		if err != nil {
			return usageError{err}
		}
		fmt.Fprintf(w, "predictions for %s:\n\n", file)
		simulate.PrintChecks(w, checks)
		fmt.Fprintln(w)
	}
	if f.search {
		return runSearch(ctx, w, specs, model, env, searchFlags{
			memoryCap: f.memoryCap, out: f.out, bestScenario: f.bestScenario,
			scenarios: args, calibration: f.calibration,
		})
	}
	doc, err := simulate.Document(specs, model, env, bench.ToolVersion())
	if err != nil {
		return usageError{err}
	}
	if f.out == "" {
		f.out = filepath.Join("out", "simulate-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return usagef("--out: %v", err)
	}
	format, err := f.format.format()
	if err != nil {
		return err
	}
	if err := results.RemoveOthers(f.out, format); err != nil {
		return err
	}
	written := []string{filepath.Join(f.out, format.FileName())}
	if err := results.Write(written[0], doc); err != nil {
		return err
	}
	if !f.noReport {
		files, err := generateReport(doc, f.out)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		written = append(written, files...)
	}
	printRunSummary(w, doc, written)
	if n := len(doc.Scenarios); n > simulate.MaxSeriesConfigurations {
		fmt.Fprintf(w, "note: %d configurations: no timelines (series are kept up to %d; --filter picks a few to see over time)\n", n, simulate.MaxSeriesConfigurations)
	}
	for _, sc := range doc.Scenarios {
		for _, r := range sc.Repetitions {
			if r.Status == results.StatusMemoryLimit {
				fmt.Fprintf(w, "%s: %s\n", sc.Name, r.Error)
			}
		}
	}
	return nil
}
