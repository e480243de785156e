package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/provebench/provebench/internal/openfile"
	"github.com/provebench/provebench/predict/calibcache"
	"github.com/spf13/cobra"

	"github.com/provebench/provebench/compare/ab"
	"github.com/provebench/provebench/gpu/backends"
	"github.com/provebench/provebench/gpu/catalog"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/reports"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
	"github.com/provebench/provebench/run/shard"
	"github.com/provebench/provebench/scenarios"
)

type runFlags struct {
	out      string
	backend  string
	filter   string
	repeat   int
	warmups  int
	noReport bool
	cacheDir string
	interval time.Duration
	heapProf bool
	shard    string
	shards   int
	// interleave runs the measured repetitions in rounds over the
	// configurations.
	interleave bool
	// set records which of repeat, warmups and interval were given: their
	// zero values are values, not "keep the scenario's".
	set   map[string]bool
	force bool
	// overwrite lets run replace a previous run's files in its output
	// directory.
	overwrite bool
	// calibration: results documents whose fitted model predicts each
	// configuration's peak for the pre-flight check.
	calibration []string
	// noCalibrationCache: neither calibrate the pre-flight check on the
	// cached runs of this host nor add this run to them.
	noCalibrationCache bool
	resultsFormat      resultsFormatFlag
	// allowMixedCommits: --calibration documents of different commits
	// calibrate together.
	allowMixedCommits bool
	// reuseProcess: repetitions per warm worker (run.Runner.ReuseProcess).
	reuseProcess int
	// serve runs repetitions on request (run.Runner.Serve), for ab.
	serve bool
}

// defaultScenario is what `provebench run` runs without files.
const defaultScenario = "quickstart"

// runHelp is run's long help; %s: the embedded scenarios' names.
const runHelp = `run runs every configuration of the scenario files, each repetition in its own
child process, sampling RSS, GPU memory and the pipeline's counters on one time
axis. It writes DIR/results.json.gz (compact JSON, gzip; --results-format json
for an indented results.json) after every repetition (a run killed at any
moment keeps what finished), then results.csv, results.bench (Go benchmark
format, for benchstat) and the report (report.md, report.html and plots).

Without files it runs the embedded ` + defaultScenario + ` scenarios; an embedded file
can also be named as embedded:NAME (%s).

Before anything runs or is written, a pre-flight check estimates each
configuration's peak RSS and the size of any key still to generate, and
refuses (exit 2, a table of the estimates and the limits passed) when one exceeds its memory_limit, the
host's memory or the free disk of the key cache; --force runs anyway. The
peak is the simulator's prediction calibrated on --calibration, else on this
host's cached runs of the configuration's backend (every run adds its results
to the calibration cache, the newest 8 per host and backend kept, and the newest
of up to 8 other sets of configurations: see
provebench calibration), never less than the key and one dataset; else the
bound its strategy implies (runtime + key + the datasets it lets live at once).

DIR is refused (exit 2) when it holds a previous run's results, unless
--overwrite: it then first removes the files that run wrote (listed in
DIR/.provebench-files, and results.* and report.*), nothing else. Exec
configurations whose rendered file paths leave DIR are refused too. Paths are
resolved inside DIR, not read as text: one that leads out of DIR through a
symbolic link (a listed file under a linked folder, an exec file that is a
link) is refused (exit 2, naming it) before anything is removed or written.

Exit status: 0 when every repetition finished, 1 when one did not (failed,
crashed, stopped at its memory limit or its timeout; the summary counts
them), 2 on bad input, 130 when interrupted (finished results are kept).

With --shard k/n it runs only shard k of n of the configurations (after
--filter), for spreading a sweep over hosts: the configuration at position p
of the expanded order (from 0) belongs to shard p mod n + 1, the same split
on every host. provebench merge joins the shards' results.

Where there are several configurations (after --filter and --shard), the
measured repetitions run in rounds: repetition 1 of every configuration, then
repetition 2 of every one, and so on, each configuration's
warm-ups right before its first measured repetition; a configuration with
fewer repeats drops out of the later rounds. A host that drifts during a
sweep (a shared VM's steal time rising, a device warming) then slows every
configuration alike instead of the last ones. The results keep the
configurations in their declared order and records run_order "interleaved".
--interleave=false runs one configuration after another (all its warm-ups and
repetitions, then the next). For an A/B verdict between two sides, provebench
ab interleaves their repetitions in ABBA pairs and tests the difference.

Every repetition records the host's load (the share of the CPU time other
processes took while it ran). Where a configuration's repetitions ran under a
load that differed from the others' by more than a tenth of the host, the
summary table, the report and the throughput plot say so, with the figures:
its timed figures are the host's as much as its own.

With --reuse-process N a configuration's repetitions run in warm workers: a
child process sets the prover up once (key read and on the device, page-locked
pool, warm-up partition) and then serves up to N repetitions in a row, as a
proving daemon serves proofs, instead of paying that setup for every
repetition. Each repetition is still measured alone: its clock, counters, GPU
peaks and CPU time are its own, and its peak RSS is the kernel's peak since
its start (Linux resets it through /proc/self/clear_refs; where that fails the
sampled peak is recorded, peak_rss_source "sampled"). setup_seconds is
recorded on the first repetition a worker serves, and each repetition records
which worker (pid) served it and its place in that worker's series. The
repetitions are then less independent: whatever a process draws at its start
(where its memory lands, a slow core) is shared by all it serves, so N trades
cost against that; a failed repetition ends its worker. Cold-clock
configurations always get a process each. --serve (used by provebench ab)
runs the one configuration --filter selects on request: JSON lines on stdin,
one reply line per repetition on stdout.`

func newRunCmd() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run [FILES...]",
		Short: "Run scenarios and write results, report and plots",
		Long:  fmt.Sprintf(runHelp, strings.Join(scenarios.EmbeddedNames(), ", ")),
		Example: `  provebench run                         # the embedded quickstart, CPU backend
  provebench run scenarios/backpressure.yaml -o out/bp
  provebench run scenarios/gpu.yaml --backend cuda --filter 'hold|budget'
  provebench run scenarios/backpressure.yaml --repeat 5   # a sweep, interleaved (the default)
  provebench run scenarios/gpu.yaml --shard 2/4 -o out/shard-2   # then: provebench merge out/shard-* -o out/all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.set = map[string]bool{}
			for _, name := range []string{"repeat", "warmups", "sample-interval"} {
				f.set[name] = cmd.Flags().Changed(name)
			}
			return runRun(cmd.Context(), cmd.OutOrStdout(), args, f)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "output directory (default out/run-<date>-<time>)")
	fl.StringVar(&f.backend, "backend", "", "override every scenario's backend: "+catalog.Doc())
	fl.StringVar(&f.filter, "filter", "", "run only configurations whose name matches this regular expression")
	fl.IntVar(&f.repeat, "repeat", 0, "override every scenario's repeats (>= 1)")
	fl.IntVar(&f.warmups, "warmups", 0, "override every scenario's warm-ups (>= 0)")
	fl.BoolVar(&f.noReport, "no-report", false, "write results only, no report or plots")
	fl.StringVar(&f.cacheDir, "cache", groth16.DefaultCacheDir(), "proving key cache directory")
	fl.DurationVar(&f.interval, "sample-interval", 0, "override every scenario's sampling interval (>= 1ms, e.g. 10ms)")
	fl.StringVar(&f.shard, "shard", "", "run shard k of n of the configurations (k/n, k from 1), or auto: $JOB_COMPLETION_INDEX+1 of --shard-count or $PROVEBENCH_SHARD_COUNT (see provebench merge)")
	fl.IntVar(&f.shards, "shard-count", 0, "the number of shards, with --shard auto")
	fl.BoolVar(&f.interleave, "interleave", true, "run the measured repetitions in rounds over the configurations (repetition 1 of each, then 2, ...), so host drift slows all alike; --interleave=false runs one configuration after another")
	fl.StringSliceVar(&f.calibration, "calibration", nil, "pre-flight: predict each configuration's peak RSS with the simulator calibrated on these results documents (or their output folders) of this host (instead of the cached runs or the strategy's bound)")
	fl.BoolVar(&f.allowMixedCommits, "allow-mixed-commits", false, "pre-flight: take --calibration documents built from different commits together (refused otherwise: they measured different provers)")
	fl.BoolVar(&f.noCalibrationCache, "no-calibration-cache", false, "pre-flight: neither predict from the cached runs of this host (take each strategy's bound) nor add this run to them")
	fl.BoolVar(&f.overwrite, "overwrite", false, "run into an output directory that holds a previous run's results, removing first the files that run wrote (only those)")
	fl.BoolVar(&f.force, "force", false, "run configurations the pre-flight check refuses (estimated peak RSS over memory_limit or the host's memory, key larger than the free disk)")
	f.resultsFormat.register(fl)
	fl.BoolVar(&f.heapProf, "heap-profile", false, "write a heap profile (pprof) of each measured repetition at its Go heap's peak")
	fl.IntVar(&f.reuseProcess, "reuse-process", 0, "serve up to N repetitions of a configuration in a row from one warm child process (setup paid once per process); 0: a process per repetition")
	fl.BoolVar(&f.serve, "serve", false, "run the one configuration --filter selects on request, for provebench ab: JSON requests on stdin, one reply line per repetition on stdout")
	return c
}

// loadSpecs loads scenario files or embedded:NAME entries, or the default.
func loadSpecs(args []string) ([]run.Spec, error) {
	if len(args) == 0 {
		return scenarios.LoadEmbedded(defaultScenario)
	}
	var files []string
	var specs []run.Spec
	for _, a := range args {
		if name, ok := strings.CutPrefix(a, "embedded:"); ok {
			s, err := scenarios.LoadEmbedded(name)
			if err != nil {
				return nil, err
			}
			specs = append(specs, s...)
			continue
		}
		files = append(files, a)
	}
	if len(files) > 0 {
		s, err := scenarios.Load(files...)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s...)
	}
	return specs, nil
}

// scenarioFiles identifies the scenario files of a run by path and content
// hash, in the order given (the default: the embedded file).
func scenarioFiles(args []string) ([]results.ScenarioFile, error) {
	if len(args) == 0 {
		args = []string{"embedded:" + defaultScenario}
	}
	var out []results.ScenarioFile
	for _, a := range args {
		var data []byte
		var err error
		if name, ok := strings.CutPrefix(a, "embedded:"); ok {
			data, err = scenarios.Embedded.ReadFile(strings.TrimSuffix(name, ".yaml") + ".yaml")
		} else {
			data, err = openfile.ReadFile(a)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		out = append(out, shard.FileIdentity(a, data))
	}
	return out, nil
}

func applyRunFlags(specs []run.Spec, f runFlags) ([]run.Spec, error) {
	if err := checkRunFlags(f); err != nil {
		return nil, err
	}
	var re *regexp.Regexp
	if f.filter != "" {
		var err error
		if re, err = regexp.Compile(f.filter); err != nil {
			return nil, usagef("--filter: %v", err)
		}
	}
	var out []run.Spec
	for _, s := range specs {
		if re != nil && !re.MatchString(s.Name) {
			continue
		}
		s, err := overrideSpec(s, f)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	switch {
	case len(out) > 0:
	case len(specs) == 0:
		return nil, usagef("no configuration to run")
	default:
		return nil, usagef("--filter %q matches no configuration", f.filter)
	}
	return out, nil
}

// checkRunFlags refuses the values of the overriding flags no
// configuration could take.
func checkRunFlags(f runFlags) error {
	if f.backend != "" {
		if !slices.Contains(catalog.Names(), f.backend) {
			return usagef("--backend: %q is not one of %s", f.backend, strings.Join(catalog.Names(), ", "))
		}
	}
	if f.set["repeat"] && f.repeat < 1 {
		return usagef("--repeat %d: must be at least 1", f.repeat)
	}
	if f.set["warmups"] && f.warmups < 0 {
		return usagef("--warmups %d: must be at least 0", f.warmups)
	}
	if f.set["sample-interval"] && f.interval < time.Millisecond {
		return usagef("--sample-interval %s: must be at least 1ms", f.interval)
	}
	return nil
}

// overrideSpec gives one configuration the settings the flags override.
func overrideSpec(s run.Spec, f runFlags) (run.Spec, error) {
	if f.backend != "" {
		s.Backend = f.backend
	}
	if f.set["repeat"] {
		s.Repeats = f.repeat
	}
	if f.set["warmups"] {
		s.Warmups = f.warmups
	}
	if f.set["sample-interval"] {
		s.SampleInterval = f.interval
		if s.Timeout > 0 && s.SampleInterval > s.Timeout {
			return s, usagef("--sample-interval %s: longer than the timeout of %s (%s), so no sample would be taken", f.interval, s.Name, s.Timeout)
		}
	}
	return s, nil
}

func runRun(ctx context.Context, w io.Writer, args []string, f runFlags) error {
	format, err := f.resultsFormat.format()
	if err != nil {
		return err
	}
	if f.reuseProcess < 0 {
		return usagef("--reuse-process %d: a count of repetitions per process, 0 for a process each", f.reuseProcess)
	}
	replies := w
	if f.serve {
		// Standard output carries the replies; everything a person
		// reads goes to standard error.
		w = os.Stderr
	}
	plan, err := planRun(args, f)
	if err != nil {
		return err
	}
	env := run.HostEnvironment(ctx)
	if err := checkRunnable(ctx, w, plan.specs, env, f); err != nil {
		return err
	}
	if f.out == "" {
		f.out = filepath.Join("out", "run-"+time.Now().Format("20060102-150405"))
	}
	// The directory is checked and locked before any work, and stays
	// locked until the report is written: another run into it would mix
	// its results with these.
	unlock, err := openOutDir(plan.specs, f)
	if err != nil {
		return err
	}
	defer unlock()
	runner, err := newRunner(w, format, env, plan, f)
	if err != nil {
		return err
	}
	closeGPU := attachGPU(runner)
	defer closeGPU()
	if f.serve {
		return serveRun(ctx, runner, plan.specs[0], replies)
	}
	return runAndWrite(ctx, w, runner, plan.specs, f)
}

// runPlan is what a run runs: the configurations after the flags and the
// shard, the scenario files they came from, and the shard's record.
type runPlan struct {
	specs []run.Spec
	files []results.ScenarioFile
	shard *results.Shard
}

// planRun loads the scenarios and applies the flags, --filter and --shard
// to them.
func planRun(args []string, f runFlags) (runPlan, error) {
	specs, err := loadSpecs(args)
	if err != nil {
		return runPlan{}, usageError{err}
	}
	specs, err = applyRunFlags(specs, f)
	if err != nil {
		return runPlan{}, err
	}
	if f.serve && len(specs) != 1 {
		return runPlan{}, usagef("--serve runs one configuration: --filter selects %d", len(specs))
	}
	files, err := scenarioFiles(args)
	if err != nil {
		return runPlan{}, usageError{err}
	}
	plan := runPlan{specs: specs, files: files}
	if f.shard != "" {
		if plan.specs, plan.shard, err = selectShard(specs, f); err != nil {
			return runPlan{}, err
		}
	} else if f.shards != 0 {
		return runPlan{}, usagef("--shard-count: goes with --shard auto")
	}
	return plan, nil
}

// checkRunnable refuses, before anything is written, configurations the
// pre-flight check refuses (unless --force) and those this binary has no
// backend for.
func checkRunnable(ctx context.Context, w io.Writer, specs []run.Spec, env results.Environment, f runFlags) error {
	if !f.force {
		if err := preflight(ctx, w, specs, env, f); err != nil {
			return err
		}
	}
	for _, s := range specs {
		if err := backends.Available(s.Backend); err != nil {
			return usageError{fmt.Errorf("%s (%s): %w", s.Name, s.Source, err)}
		}
	}
	return nil
}

// openOutDir checks the exec configurations' paths against -o, locks it,
// and clears it (--overwrite) or checks that it holds no finished run. The
// caller unlocks it once its last file is written.
func openOutDir(specs []run.Spec, f runFlags) (unlock func(), err error) {
	if err := run.CheckExecPaths(specs, f.out); err != nil {
		return nil, usageError{err}
	}
	unlock, err = run.LockOutDir(f.out)
	if err != nil {
		return nil, usagef("-o %s: %w", f.out, err)
	}
	if f.overwrite {
		err = run.ClearOutDir(f.out)
	} else {
		err = run.CheckFinished(f.out)
	}
	if err != nil {
		unlock()
		return nil, usagef("-o %s: %w", f.out, err)
	}
	return unlock, nil
}

// newRunner is the runner the flags describe, its child processes started
// from this binary.
func newRunner(w io.Writer, format results.Format, env results.Environment, plan runPlan, f runFlags) (*run.Runner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locate the provebench binary for child processes: %w", err)
	}
	return &run.Runner{
		Exe:      exe,
		OutDir:   f.out,
		Format:   format,
		CacheDir: f.cacheDir,
		Env:      env,
		Progress: run.NewProgress(w, isTerminal(w)),
		Log:      w,
		Warn:     os.Stderr,

		ScenarioFiles: plan.files,
		Shard:         plan.shard,
		HeapProfiles:  f.heapProf,
		Interleave:    f.interleave && len(plan.specs) > 1,
		ReuseProcess:  f.reuseProcess,
	}, nil
}

// runAndWrite runs the configurations, writes the folder's files from the
// document, prints the summary and turns the outcome into the exit status:
// 130 when interrupted, 1 when a repetition did not finish.
func runAndWrite(ctx context.Context, w io.Writer, runner *run.Runner, specs []run.Spec, f runFlags) error {
	runner.PrintOrder(w, len(specs))
	doc, runErr := runner.Run(ctx, specs)
	if doc == nil {
		if errors.Is(runErr, run.ErrOutDir) {
			return usagef("-o %s: %w", f.out, runErr)
		}
		return runErr
	}
	interrupted := errors.Is(runErr, context.Canceled)
	if runErr != nil && !interrupted {
		return runErr
	}
	folder := runner.Folder()
	written, err := writeRunFiles(doc, folder, f)
	if err != nil {
		return err
	}
	folder.WriteManifestOrWarn(written, os.Stderr)
	reports.PrintRunSummary(w, doc, written)
	if interrupted {
		return exitError{code: exitInterrupted, err: errors.New("interrupted: the results of finished repetitions are in " + f.out)}
	}
	return unfinishedError(doc, written[0])
}

// writeRunFiles writes what a run adds to its document once it ends (the
// tables, the report, the calibration cache's copy) and lists every file
// the run wrote, the document first, for the manifest.
func writeRunFiles(doc *results.Run, folder results.Folder, f runFlags) ([]string, error) {
	// The runner kept the document up to date; the folder's other results
	// files are written from it once, as every command writes them.
	tables, err := folder.WriteTables(doc)
	if err != nil {
		return nil, err
	}
	written := append([]string{folder.DocumentPath()}, tables...)
	if !f.noReport && len(doc.Scenarios) > 0 {
		files, err := generateReport(doc, f.out)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		written = append(written, files...)
	}
	for _, sc := range doc.Scenarios {
		for _, r := range sc.Repetitions {
			if r.HeapProfile != "" {
				written = append(written, filepath.Join(f.out, r.HeapProfile))
			}
		}
	}
	if !f.noCalibrationCache && os.Getenv(ab.NoCalibrationStoreEnv) != "1" {
		written = append(written, calibcache.Cache{Dir: calibcache.Dir(f.cacheDir)}.StoreOrWarn(doc, os.Stderr)...)
	}
	return written, nil
}

// serveRun is run --serve: repetitions on request until standard input
// ends; the results document is the record, the replies its messengers.
func serveRun(ctx context.Context, runner *run.Runner, spec run.Spec, replies io.Writer) error {
	doc, err := runner.Serve(ctx, spec, os.Stdin, replies)
	switch {
	case errors.Is(err, run.ErrBadRequest):
		return usageError{err}
	case errors.Is(err, run.ErrOutDir):
		return usagef("-o %s: %w", runner.OutDir, err)
	case errors.Is(err, context.Canceled):
		return exitError{code: exitInterrupted, err: errors.New("interrupted: the results of finished repetitions are in " + runner.OutDir)}
	case err != nil:
		return err
	}
	return unfinishedError(doc, runner.ResultsPath())
}

// unfinishedError is the exit status 1 of a run or merge whose document
// (at path) has unfinished repetitions, or nil.
func unfinishedError(doc *results.Run, path string) error {
	n, what := results.Unfinished(doc)
	if n == 0 {
		return nil
	}
	return exitError{code: exitFailure, err: fmt.Errorf("%s did not finish (%s; see %s)", units.Plural(n, "repetition"), what, path)}
}

// isTerminal reports whether w is a character device (a terminal), where
// progress can redraw a line in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newChildCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "child",
		Short:  "Run one repetition (internal: started by run)",
		Hidden: true,
		Args:   exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			stream := os.NewFile(3, "stream")
			if stream == nil {
				return usagef("child: no stream on file descriptor 3 (this command is started by `provebench run`)")
			}
			return run.ChildMain(cmd.Context(), os.Stdin, stream)
		},
	}
}

func countStatus(doc *results.Run, statuses ...results.Status) int {
	n := 0
	for _, sc := range doc.Scenarios {
		for _, r := range sc.Repetitions {
			for _, s := range statuses {
				if r.Status == s {
					n++
				}
			}
		}
	}
	return n
}
