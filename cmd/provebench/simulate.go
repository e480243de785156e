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

	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/reports"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
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
	crossValFlags
	crossValidate bool
}

// simulateHelp is simulate's long help.
const simulateHelp = `simulate plays every configuration of the scenario files through the
pipeline's own strategy gates on a virtual clock, in milliseconds even for
batches of 2^27-constraint proofs, and writes the predictions as a results
document of the usual schema (marked simulated, naming its calibration), with
the usual report and plots.

Stage costs come from --calibration: results documents of ordinary runs on one
host and backend, to which simulate fits per-stage cost laws across sizes
(synthesis against constraints x rounds on the host's cores, gpu_start and the
MSMs against constraints), the memory baseline (runtime and key against
constraints, RSS per live dataset byte) and, on a GPU, the device's peak memory
(the key and its precomputed bases counted at the factor the backend would
load them with, the rest against constraints; simulate warns where that factor
differs from the calibration's) and the setup before the clock, part by part
(setup_stages). A scenario's simulate block can write
costs and the host directly (for systems provebench cannot run) or override
the calibration's (host memory, cores, devices, GPU speed). A configuration
whose predicted RSS passes its memory_limit or the host's memory is reported
as a memory-limit repetition with the time and counters at that moment.

--explain prints the fitted model and its error on the calibration runs (each
configuration's, then each stage's apart: synthesis, upload, NTT region, MSMs,
peak GPU memory, setup);
--check RESULTS.json prints the prediction of each configuration of other
real runs beside what they measured.
--search prints the predicted Pareto front of throughput against peak memory
and the fastest configuration under --memory-cap, over every configuration
of the files (matrix axes may be ranges, such as {from: 4, to: 18, step: 2}:
hundreds of configurations in seconds); with -o it writes DIR/search.csv (every
configuration's prediction) and DIR/search-front.md (the front), and
--best-scenario FILE writes the fastest under the cap as a scenario file that
provebench run runs as is. --explain, --check, --search and --best-scenario
give the model's error on its calibration runs (in-sample) beside the
predictions, and a calibrated simulate warns when the calibration ran under
high or uneven host load or without interleaving. On the CPU backend the
prover shares the host's cores: predictions are for a quiet host, and
--explain and --check predict each run at the share of the CPU its
repetitions recorded.

Calibration documents must describe one prover: documents built from
different commits, or where no commit is recorded by different binaries
(their hash, else their version), are refused (exit 2, naming each one's)
unless --allow-mixed-commits; a document given twice (the same file, or a
copy of the same run) is refused; simulated documents are refused, exec configurations
are left out with a note on stderr, and warm and cold clocks do not mix. A
calibration at one size says on stderr that every exponent is assumed 1.

Validating a model on your own host: run plain shapes and the shapes you
mean to predict (provebench run ... -o out/cal, -o out/val), then
  provebench simulate --cross-validate out/cal out/val -o out/xval
groups the runs' configurations into families (--family-by matrix: a
scenario's vars.family, else its matrix, else itself; config; or
label:NAME, such as label:workload.constraints to leave one size out),
predicts each family with a model calibrated on all the others (and on
--calibration's documents, which every fold keeps: a set of plain shapes
that is never itself predicted), and prints
(with -o, writes crossval.csv, crossval-summary.csv and crossval.md) each
configuration's predicted and measured seconds per proof and peak RSS
(medians of its repetitions) with the error, the distribution of |error|
(median, p90, max) per metric, overall and per strategy, and each stage's
error per family left out (per size with label:workload.constraints). Read the
max and the signed median per strategy: one strategy far off is a
mechanism the model lacks. --target-p90 10% --target-max 15% exits 3 when
a metric misses either (or a configuration could not be predicted).
A host's speed drifts from one minute to the next: measure a family beside
the shapes it is predicted from (provebench run cal.yaml val.yaml
--interleave, or those shapes again in its run). A configuration that
several documents measured (same name and spec) is one, its repetitions
pooled.

Interrupted (Ctrl-C), simulate exits 130 at once and writes nothing.`

func newSimulateCmd() *cobra.Command {
	var f simulateFlags
	c := &cobra.Command{
		Use:   "simulate SCENARIO... | --cross-validate RESULTS...",
		Short: "Predict scenarios in virtual time, calibrated from real runs",
		Long:  simulateHelp,
		Example: `  provebench simulate scenarios/cuzk-phase12.yaml -o out/cuzk
  provebench simulate scenarios/backpressure.yaml --calibration out/cal -o out/sim --explain
  provebench simulate scenarios/cuzk-phase12.yaml --search --memory-cap 480GiB
  provebench simulate docs/results/cuzk-phase12-search.yaml --search --memory-cap 480GiB -o out/search --best-scenario out/best.yaml
  provebench simulate --cross-validate out/cal out/val --target-p90 10% --target-max 15% -o out/xval`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.crossValidate {
				if err := crossValOnly(cmd); err != nil {
					return err
				}
				f.crossValFlags.out, f.crossValFlags.calibration = f.out, f.calibration
				return runCrossValidate(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args, f.crossValFlags)
			}
			if err := noCrossValFlags(cmd); err != nil {
				return err
			}
			return runSimulate(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args, f)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "output directory (default out/simulate-<date>-<time>; with --search, none: print only)")
	fl.StringSliceVar(&f.calibration, "calibration", nil, "results documents (or their output folders) of real runs to fit stage costs to (repeat or comma-separate); with --cross-validate, documents in every fold's calibration, never left out or predicted")
	fl.BoolVar(&f.explain, "explain", false, "print the fitted model and its error on the calibration runs")
	fl.BoolVar(&f.noReport, "no-report", false, "write results only, no report or plots")
	fl.StringVar(&f.filter, "filter", "", "simulate only configurations whose name matches this regular expression")
	fl.BoolVar(&f.search, "search", false, "print the Pareto front of throughput against peak memory and the best configuration under --memory-cap; with -o, write search.csv and search-front.md there")
	f.format.register(fl)
	fl.StringSliceVar(&f.check, "check", nil, "results documents (or their output folders) of real runs not used for calibration: print each configuration's prediction beside its measurement (Markdown)")
	fl.StringVar(&f.memoryCap, "memory-cap", "", "with --search: the peak RSS the best configuration must stay under (such as 480GiB)")
	fl.StringVar(&f.bestScenario, "best-scenario", "", "with --search: write the fastest configuration under --memory-cap to this scenario file, every setting explicit, for provebench run")
	fl.BoolVar(&f.crossValidate, "cross-validate", false, "the arguments are results documents of real runs: predict each family of configurations with a model calibrated on the others, and print (with -o, write crossval.csv, crossval-summary.csv, crossval.md) the errors and their distribution")
	fl.StringVar(&f.familyBy, "family-by", "matrix", "with --cross-validate: what makes a family: matrix (vars.family, else the matrix, else the scenario), config, or label:NAME (a field path such as workload.constraints, else a matrix label or variable)")
	fl.StringVar(&f.targetP90, "target-p90", "", "with --cross-validate: exit 3 when the 90th percentile of |error| of a metric passes this (such as 10%)")
	fl.StringVar(&f.targetMax, "target-max", "", "with --cross-validate: exit 3 when the largest |error| of a metric passes this (such as 15%)")
	fl.BoolVar(&f.allowMixedCommits, "allow-mixed-commits", false, "calibrate on documents built from different commits together (refused otherwise: they measured different provers)")
	return c
}

// crossValOnly refuses flags --cross-validate does not read.
func crossValOnly(c *cobra.Command) error {
	for _, name := range []string{"explain", "no-report", "filter", "search", "check", "memory-cap", "best-scenario"} {
		if c.Flags().Changed(name) {
			return usagef("--%s does not go with --cross-validate, which calibrates on its own arguments", name)
		}
	}
	return nil
}

// noCrossValFlags refuses --cross-validate's own flags without it.
func noCrossValFlags(c *cobra.Command) error {
	for _, name := range []string{"family-by", "target-p90", "target-max"} {
		if c.Flags().Changed(name) {
			return usagef("--%s needs --cross-validate", name)
		}
	}
	return nil
}

func runSimulate(ctx context.Context, w, errw io.Writer, args []string, f simulateFlags) error {
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
	model, env, err := simulationModel(ctx, errw, f)
	if err != nil {
		return err
	}
	if model != nil {
		predict.PrintWarnings(errw, append(model.Beyond(specs), model.GPUMemoryWarnings(specs)...))
	}
	if err := explainModel(ctx, w, errw, model, env, f); err != nil {
		return err
	}
	if f.search {
		return runSearch(ctx, w, specs, model, env, searchFlags{
			memoryCap: f.memoryCap, out: f.out, bestScenario: f.bestScenario,
			scenarios: args, calibration: f.calibration,
		})
	}
	var doc *results.Run
	err = untilDone(ctx, func() (err error) {
		doc, err = predict.Document(ctx, specs, model, env, run.ToolVersion())
		return err
	})
	if ctx.Err() != nil {
		return interrupted()
	}
	if err != nil {
		return usageError{err}
	}
	if f.out == "" {
		f.out = filepath.Join("out", "simulate-"+time.Now().Format("20060102-150405"))
	}
	format, err := f.format.format()
	if err != nil {
		return err
	}
	written, err := writeSimulated(ctx, doc, f.out, format, !f.noReport)
	if err != nil {
		return err
	}
	reports.PrintRunSummary(w, doc, written)
	predict.PrintSimulatedNotes(w, doc)
	return nil
}

// simulationModel is the model --calibration fits, and the environment the
// simulation is of: the calibration's host, else a simulated one (nil
// model: the model's defaults).
func simulationModel(ctx context.Context, errw io.Writer, f simulateFlags) (*predict.Model, results.Environment, error) {
	env := results.Environment{Hostname: "simulated", OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}
	if len(f.calibration) == 0 {
		return nil, env, nil
	}
	model, err := predict.Calibrate(ctx, f.calibration, predict.LoadOptions{AllowMixedCommits: f.allowMixedCommits})
	if err != nil {
		return nil, env, usageError{err}
	}
	predict.PrintNotes(errw, model.Notes)
	if !f.explain && !f.search { // --explain and --search print them beside the predictions
		predict.PrintWarnings(errw, model.Warnings())
	}
	return model, model.Environment, nil
}

// explainModel prints what --explain and --check ask of the calibrated
// model: the fitted model and its error, and its predictions beside other
// real runs.
func explainModel(ctx context.Context, w, errw io.Writer, model *predict.Model, env results.Environment, f simulateFlags) error {
	if f.explain {
		if model == nil {
			return usagef("--explain needs --calibration")
		}
		if err := model.PrintExplanation(w, int64(env.MemoryBytes)); err != nil {
			return err
		}
	}
	for _, file := range f.check {
		if model == nil {
			return usagef("--check needs --calibration")
		}
		checks, notes, err := model.CheckDocument(ctx, file, int64(env.MemoryBytes))
		if err != nil {
			return usageError{err}
		}
		predict.PrintNotes(errw, notes)
		predict.PrintCheck(w, file, checks)
	}
	return nil
}

// writeSimulated writes the output folder's results files (the document,
// results.csv and results.bench, as every command writes them:
// results.Folder) and the report into dir: first into a hidden folder
// there, then moved into place once whole, so that an interrupt (which
// returns at once, the report left to die with the process) leaves nothing
// half-written, not even the folder when it made it. A report that fails
// leaves the results files. The manifest records what was written.
func writeSimulated(ctx context.Context, doc *results.Run, dir string, format results.Format, report bool) (written []string, err error) {
	if ctx.Err() != nil {
		return nil, interrupted()
	}
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usagef("--out: %v", err)
	}
	stage, err := os.MkdirTemp(dir, ".simulate-partial-")
	if err != nil {
		return nil, usagef("--out: %v", err)
	}
	defer func() {
		os.RemoveAll(stage)
		if len(written) == 0 && os.IsNotExist(statErr) {
			os.Remove(dir) // made here, and empty
		}
	}()
	var files []string
	var reportErr error
	err = untilDone(ctx, func() (err error) {
		if files, err = (results.Folder{Dir: stage, Format: format}).Write(doc); err != nil || !report {
			return err
		}
		more, err := generateReport(doc, stage)
		if err != nil {
			reportErr = fmt.Errorf("report: %w", err)
			more = nil
		}
		files = append(files, more...)
		return nil
	})
	if ctx.Err() != nil {
		return nil, interrupted()
	}
	if err != nil {
		return nil, err
	}
	if err := results.RemoveOthers(dir, format); err != nil {
		return nil, err
	}
	for _, f := range files {
		to := filepath.Join(dir, filepath.Base(f))
		if err := os.Rename(f, to); err != nil {
			return written, err
		}
		written = append(written, to)
	}
	if err := (results.Folder{Dir: dir}).WriteManifest(written); err != nil {
		return written, err
	}
	return written, reportErr
}
