package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/compare"
	"github.com/provebench/provebench/compare/ab"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/internal/atomicfile"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
	"github.com/provebench/provebench/run/sample"
	"github.com/provebench/provebench/scenarios"
)

// defaultMinPairs is the fewest pairs ab measures per configuration unless
// --pairs says otherwise: enough for a 95% interval narrow enough to gate
// a 5% threshold on a shared machine (6 is the least that gives one at all).
const defaultMinPairs = 10

type abFlags struct {
	out                    string
	baseBinary, newBinary  string
	baseScenarios          []string
	newScenarios           []string
	filter                 string
	pairs                  int
	warmups                optionalInt
	untilResolved          time.Duration
	thresholds, markdown   string
	cacheDir               string
	allowDifferentHardware bool
	format                 resultsFormatFlag
	workerReps             int
	hostClock              string
	hostMemory             string
}

// defaultWorkerReps is how many repetitions one warm worker of a side
// serves before a fresh process replaces it (--worker-reps): few enough
// that whatever a process draws at its start (memory placement, a slow
// core) is sampled several times in a verdict of 20 or more pairs instead
// of becoming a side's fixed bias. A worker whose setup its windows have
// not yet paid for serves on (compare/ab's retired).
const defaultWorkerReps = 8

// abHelp is ab's long help.
const abHelp = `ab compares two sides measured side by side on this machine: a side is a
provebench binary (default: this one) and scenario files (default: the
positional ones). Sides may differ in binary (the base commit against a pull
request), in scenario files (release against hold), or both.

For every configuration the two sides share by name, each side gets its
warm-ups, then the pairs run in ABBA order, every repetition a run of the
side's own binary (` + "`provebench run FILES --filter ^NAME$ --repeat 1 --warmups 0`" + `),
so the machine's load falls on both sides alike. Per metric, the ratio
new/base has a 95% interval from the pairs (Hodges–Lehmann on the log ratios,
with the Wilcoxon signed-rank interval; exact, no random seed): a regression
only when the whole interval lies past the metric's threshold in the bad
direction; ~ when the interval includes no change. Exact figures (failures,
counters, the strategies' bounds) are compared directly. Outliers (modified
Z-score beyond 3.5) and high host load are flagged.

Device time per partition (device_seconds_per_partition: the GPU's own
clock; on the CPU backend the GPU worker's busy time, on the host's clock,
which moves with load like wall time) gates by default at 5%
beside wall and CPU time. A gated metric that cannot be judged makes the
outcome inconclusive, never a pass: its interval holds the threshold (the
report says about how many more pairs would resolve it), too few pairs, or,
for a metric on the host's clock (wall time, the CPU backend's device
time), a host oversubscribed beyond 2 runnable threads per CPU.
--until-resolved DURATION keeps adding pairs to unresolved configurations,
interleaved as before, until every gated metric is judged or the time is up
(the budget: on a GPU host, the time the GPUs are held), serving first the
configurations nearest to a verdict. A configuration with a regression
established gets more pairs only for metrics that look regressed too (not
judged, estimate past the threshold), at most as many again, so that the
verdict names them. The report's first lines say what the
verdict cost: wall time (and GPU-seconds held), pairs, the measured windows
and the setups paid.

Each side runs warm by default: one ` + "`provebench run --serve`" + ` of the side's binary
per configuration, whose worker process sets the prover up once (key on the
device, pool, warm-up partition) and serves --worker-reps repetitions
(default 8) before a fresh one replaces it, more (up to 4 times as many)
while its windows add up to less than 8 times its setup, so a pair costs its
two measured windows and a small share of a setup rather than two setups;
both sides' first warm-ups run at once, so that their setups overlap, where
two fit the host's memory (--host-memory) by the strategies' bound. Where
they may not, the base side warms up alone first, and if twice its measured
peak RSS or GPU memory passes 90% of the host's or the GPU's, the sides are
warm one at a time: the pairs run in ABBA blocks (the warm side's half of
the pairs, then the other side's process started, after the first's has
ended, for its two halves, then the first's again), each process warmed as
it starts, and the report's cost lines say so. Each
repetition is still measured alone (its clock, counters, GPU peaks, CPU
time, and its kernel peak RSS since its start). A side whose binary cannot serve (built
before --serve) runs a process per repetition; --worker-reps 0 makes both
do so. The report says which way each side ran.

Wall time is judged on the pairs measured while the host was quiet (both
repetitions with neighbours under 10% of the host's CPU time and under 5%
steal) when at least 6 are; the report says how many it used. Where wall time
(and the CPU backend's device time, the host's clock too) could not be judged,
the verdict rests by default on what could: a configuration whose CPU time was
judged, and whose wall time over every pair, busy ones included, is not worse
beyond the noise, passes, and the headline says "wall time NOT JUDGED" and why
(--host-clock-unjudged inconclusive makes it exit 4 instead). A wall-time
change the noise cannot hide (the code waits: +20% wall, the same CPU) still
reads worse over every pair and stays inconclusive. --until-resolved gives no
pairs to a configuration that only a quieter host could judge (no quiet pair
yet, or an oversubscribed host) and says so.

It writes DIR/base/results.json.gz and DIR/new/results.json.gz (results.json
with --results-format json; rewritten after
every repetition), DIR/ab.txt and the Markdown summary DIR/ab.md, which is
also appended to $GITHUB_STEP_SUMMARY when that is set.

Exit status: 0 no regression (every gated metric judged), 3 regression,
4 inconclusive (no regression found, but a gated metric could not be
judged), 1 a side measured nothing, or repetitions failed or crashed where
the pairs that ran would have passed (the report then starts FAILED), 2 bad
input (also when the sides' backends differ, unless
--allow-different-hardware, a -o that another ab holds or a finished ab
wrote), 130 interrupted. The first line of the report says the same.`

func newABCmd() *cobra.Command {
	var f abFlags
	c := &cobra.Command{
		Use:   "ab [SCENARIO...] -o DIR",
		Short: "Run two sides interleaved on this machine and fail on a regression",
		Long:  abHelp,
		Example: `  provebench ab scenarios/ci.yaml -o out/ab --base-binary /tmp/provebench-main
  provebench ab scenarios/ci.yaml -o out/ab --base-binary /tmp/provebench-main --until-resolved 10m
  provebench ab -o out/ab --base-scenario base.yaml --new-scenario new.yaml --pairs 20`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAB(cmd.Context(), cmd.OutOrStdout(), args, f)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "output directory (default out/ab-<date>-<time>)")
	fl.StringVar(&f.baseBinary, "base-binary", "", "provebench binary of the base side (default: this one)")
	fl.StringVar(&f.newBinary, "new-binary", "", "provebench binary of the new side (default: this one)")
	fl.StringArrayVar(&f.baseScenarios, "base-scenario", nil, "scenario file of the base side, repeatable (default: the positional files)")
	fl.StringArrayVar(&f.newScenarios, "new-scenario", nil, "scenario file of the new side, repeatable (default: the positional files)")
	fl.StringVar(&f.filter, "filter", "", "compare only configurations whose name matches this regular expression")
	fl.IntVar(&f.pairs, "pairs", 0, fmt.Sprintf("pairs per configuration (default: the scenario's repeats, at least %d; at least %d)", defaultMinPairs, compare.MinPairs))
	fl.Var(&f.warmups, "warmups", "warm-ups per side and configuration (default: the scenario's)")
	fl.DurationVar(&f.untilResolved, "until-resolved", 0, "keep adding pairs to configurations with a gated metric not yet judged, until all are or this much time has passed since ab began measuring (e.g. 10m; a pair in flight finishes)")
	fl.StringVar(&f.thresholds, "threshold", "", "per-metric thresholds over the defaults, e.g. seconds_per_proof=5%,peak_rss_bytes=10% (or =off)")
	fl.StringVar(&f.markdown, "markdown", "", "also write the Markdown summary to this file")
	fl.StringVar(&f.cacheDir, "cache", groth16.DefaultCacheDir(), "proving key cache directory")
	f.format.register(fl)
	fl.StringVar(&f.hostClock, "host-clock-unjudged", "pass", "what a gated metric on the host's clock (wall time; the CPU backend's device time) that could not be judged makes of the verdict: pass (the default: the verdict rests on CPU time, the exact figures and memory, where CPU time was judged and the metric's estimate is within its threshold; the report says wall time was not judged and why) or inconclusive (exit 4)")
	fl.BoolVar(&f.allowDifferentHardware, "allow-different-hardware", false, "compare sides whose configurations run on different backends")
	fl.StringVar(&f.hostMemory, "host-memory", "", "the memory two warm sides must fit in together, e.g. 100GiB (default: this host's MemTotal; set it where a cgroup limit is lower)")
	fl.IntVar(&f.workerReps, "worker-reps", defaultWorkerReps, "repetitions each side's warm worker serves before a fresh process replaces it (more, up to 4 times as many, while its windows add up to less than 8x its setup); 0: a process per repetition")
	return c
}

func runAB(ctx context.Context, w io.Writer, args []string, f abFlags) error {
	th, err := compare.ParseThresholds(f.thresholds)
	if err != nil {
		return usagef("--threshold: %v", err)
	}
	if f.untilResolved < 0 {
		return usagef("--until-resolved: %v: want a duration such as 10m", f.untilResolved)
	}
	if f.workerReps < 0 || f.workerReps > ab.MaxWorkerReps {
		return usagef("--worker-reps %d: a count of repetitions per worker, 0 for a process each, at most %d", f.workerReps, ab.MaxWorkerReps)
	}
	policy, err := compare.HostClockPolicyNamed(f.hostClock)
	if err != nil {
		return usagef("--host-clock-unjudged: %v", err)
	}
	runner, configs, err := planAB(ctx, args, f)
	if err != nil {
		return err
	}
	unlock, err := openABOut(runner.OutDir)
	if err != nil {
		return err
	}
	defer unlock()
	runner.PrintStart(w, len(configs))
	opts := compare.Options{Thresholds: th, Paired: true, AllowDifferentHardware: f.allowDifferentHardware}
	start := time.Now()
	var deadline time.Time
	if f.untilResolved > 0 {
		deadline = start.Add(f.untilResolved)
	}
	// The judge wants pairs for every metric more pairs can resolve, the
	// host-clock ones included; the final verdict applies the policy.
	base, cur, runErr := runner.RunUntil(ctx, configs, deadline, judgeAB(opts))
	opts.HostClock = policy
	switch {
	case errors.Is(runErr, ab.ErrBadInput):
		return usageError{runErr}
	case errors.Is(runErr, context.Canceled):
		return exitError{code: exitInterrupted, err: errors.New("interrupted: finished repetitions are in " + runner.OutDir)}
	case runErr != nil:
		return runErr
	}
	ab.PrintMeasured(w, time.Since(start))
	if err := sidesMeasured(base, cur, runner.OutDir); err != nil {
		return err
	}
	rep, err := compare.Compare(base, cur, opts)
	if err != nil {
		return usageError{err}
	}
	rep.Cost = append([]string{ab.CostOf(base, cur, time.Since(start)).String(), runner.ModesNote()}, runner.Notes(base, cur)...)
	if err := writeABFiles(runner.OutDir, rep); err != nil {
		return err
	}
	// The exit status is the verdict's first line's: a comparison that
	// did not pass says so whatever crashed; one that would have passed
	// is no pass with repetitions failed, and says that first.
	failed := countStatus(base, results.StatusFailed, results.StatusCrashed) + countStatus(cur, results.StatusFailed, results.StatusCrashed)
	if failed > 0 && rep.Outcome() == compare.Pass {
		ab.PrintFailed(w, failed, runner.OutDir)
		if err := publishWith(rep.WriteBrief(w, filepath.Join(runner.OutDir, "ab.md")), rep, f.markdown); err != nil {
			return err
		}
		return exitError{code: exitFailure, err: fmt.Errorf("%d repetitions failed or crashed (see %s)", failed, runner.OutDir)}
	}
	published := publishWith(rep.WriteBrief(w, filepath.Join(runner.OutDir, "ab.md")), rep, f.markdown)
	if failed > 0 {
		ab.PrintFailedNote(w, failed, runner.OutDir)
	}
	return published
}

// sidesMeasured refuses to compare a side none of whose repetitions was
// measured (every one crashed or failed, its binary's fault or its
// lines not results): there is nothing of it to compare, and its empty
// record would read as another machine. The error names the side and
// its first repetition's error.
func sidesMeasured(base, cur *results.Run, dir string) error {
	for i, doc := range []*results.Run{base, cur} {
		if countStatus(doc, results.StatusOK) > 0 {
			continue
		}
		name, why := [2]string{"base", "new"}[i], "no repetition ran"
		for _, sc := range doc.Scenarios {
			if len(sc.Repetitions) > 0 {
				why = fmt.Sprintf("%d repetitions, none measured; the first: %s: %s", countStatus(doc, results.StatusFailed, results.StatusCrashed), sc.Repetitions[0].Status, firstLine(sc.Repetitions[0].Error))
				break
			}
		}
		return exitError{code: exitFailure, err: fmt.Errorf("the %s side measured nothing (%s); see %s", name, why, dir)}
	}
	return nil
}

// firstLine is s up to its first line break, at most 300 bytes.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// judgeAB is --until-resolved's judge: compare's own estimate, per
// configuration, of the pairs that would resolve its inconclusive
// metrics. A configuration whose metrics not judged have no such estimate
// is blocked by a busy host alone (no quiet pair yet, or an oversubscribed
// host): it gets no pairs, since pairs measured on a busy host cannot
// judge it, and ab says so: otherwise such a configuration takes every
// pair of the budget while one that more pairs would resolve gets none. A
// configuration with a regression established is settled, and wants pairs
// only for its metrics that look regressed too (compare's ToName; ab
// bounds them). Runs that cannot be compared want nothing: the final
// comparison says why.
func judgeAB(opts compare.Options) ab.Judge {
	return func(base, cur *results.Run) (map[string]ab.Want, error) {
		rep, err := compare.Compare(base, cur, opts)
		if err != nil {
			// Nothing to resolve: the final comparison reports the
			// same error as bad input.
			return nil, nil
		}
		wants := map[string]ab.Want{}
		for name, n := range rep.MorePairs() {
			w := ab.Want{Pairs: n}
			if n == 0 {
				w.Blocked = blockedBy(rep, name)
			}
			wants[name] = w
		}
		for name, n := range rep.ToName() {
			wants[name] = ab.Want{Pairs: n, Settled: true}
		}
		return wants, nil
	}
}

// blockedBy says what holds a configuration's verdict that more pairs
// cannot change: its metrics not judged and why ("seconds_per_proof: host
// busy: only 0 of 12 pairs ran while the host was quiet ...").
func blockedBy(rep *compare.Report, name string) string {
	var why []string
	for _, u := range rep.Unjudged() {
		if u.Scenario == name {
			why = append(why, u.Metric+": "+u.Note)
		}
	}
	return strings.Join(why, "; ")
}

// optionalInt is an int flag that may be left unset: its help shows no
// default of its own, since the default is described in words.
type optionalInt struct {
	v   int
	set bool
}

func (o *optionalInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.v)
}

func (o *optionalInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return fmt.Errorf("%q: want a count, 0 or more", s)
	}
	o.v, o.set = v, true
	return nil
}

func (o *optionalInt) Type() string { return "int" }

// planAB checks the sides and lists the configurations both have.
func planAB(ctx context.Context, args []string, f abFlags) (*ab.Runner, []ab.Config, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("locate the provebench binary: %w", err)
	}
	base := ab.Side{Name: "base", Exe: orDefault(f.baseBinary, self), Files: orDefaultFiles(f.baseScenarios, args)}
	cur := ab.Side{Name: "new", Exe: orDefault(f.newBinary, self), Files: orDefaultFiles(f.newScenarios, args)}
	if f.pairs != 0 && f.pairs < compare.MinPairs {
		return nil, nil, usagef("--pairs: %d: a 95%% interval needs at least %d pairs", f.pairs, compare.MinPairs)
	}
	for _, s := range []*ab.Side{&base, &cur} {
		if len(s.Files) == 0 {
			return nil, nil, usagef("the %s side has no scenario files: name them as arguments or with --%s-scenario", s.Name, s.Name)
		}
		if s.Exe, err = filepath.Abs(s.Exe); err != nil {
			return nil, nil, usagef("--%s-binary: %v", s.Name, err)
		}
		if err := validateSide(ctx, s); err != nil {
			return nil, nil, err
		}
	}
	configs, err := pairConfigs(base.Files, cur.Files, f)
	if err != nil {
		return nil, nil, err
	}
	if f.out == "" {
		f.out = filepath.Join("out", "ab-"+time.Now().Format("20060102-150405"))
	}
	format, err := f.format.format()
	if err != nil {
		return nil, nil, err
	}
	runner := &ab.Runner{Base: base, New: cur, OutDir: f.out, Format: format, CacheDir: f.cacheDir, Log: os.Stderr, Terminal: isTerminal(os.Stderr), WorkerReps: f.workerReps, Load: childrenLoad}
	if runner.HostMemory, err = hostMemory(ctx, f.hostMemory); err != nil {
		return nil, nil, err
	}
	return runner, configs, nil
}

// validateSide has the side's own binary check its scenario files, so that
// a file the base cannot read fails at once, not after half the run.
func validateSide(ctx context.Context, s *ab.Side) error {
	out, err := exec.CommandContext(ctx, s.Exe, append([]string{"validate"}, s.Files...)...).CombinedOutput()
	if err != nil {
		return usagef("the %s side's binary %s does not accept its scenario files (%v):\n%s", s.Name, s.Exe, err, out)
	}
	return nil
}

// pairConfigs loads both sides' configurations and keeps those they share
// by name, in the base side's order, with their pairs and warm-ups.
func pairConfigs(baseFiles, newFiles []string, f abFlags) ([]ab.Config, error) {
	load := func(files []string) ([]run.Spec, error) {
		specs, err := loadSpecs(files)
		if err != nil {
			return nil, usageError{err}
		}
		return applyRunFlags(specs, runFlags{filter: f.filter, warmups: -1})
	}
	bs, err := load(baseFiles)
	if err != nil {
		return nil, err
	}
	ns, err := load(newFiles)
	if err != nil {
		return nil, err
	}
	byName := map[string]run.Spec{}
	for _, s := range ns {
		byName[s.Name] = s
	}
	var configs []ab.Config
	for _, b := range bs {
		n, ok := byName[b.Name]
		if !ok {
			continue
		}
		if b.Backend != n.Backend && !f.allowDifferentHardware {
			return nil, usagef("configuration %q: backend %s on the base side, %s on the new: timings across backends differ for reasons that are not the code's (--allow-different-hardware to compare anyway)", b.Name, b.Backend, n.Backend)
		}
		cfg := ab.Config{Name: b.Name, Pairs: f.pairs, Warmups: f.warmups.v, Timeout: max(b.Timeout, n.Timeout), PeakRSS: estimatedPeak(&b, &n)}
		if cfg.Pairs == 0 {
			cfg.Pairs = max(b.Repeats, n.Repeats, defaultMinPairs)
		}
		if !f.warmups.set {
			cfg.Warmups = max(b.Warmups, n.Warmups)
		}
		configs = append(configs, cfg)
	}
	if len(configs) == 0 {
		return nil, usagef("the sides share no configuration by name: ab pairs configurations by name, so give both sides' files the same scenario names")
	}
	return configs, nil
}

// hostMemory is what two warm sides must fit in together: --host-memory,
// else the host's MemTotal, else 0 (unknown: the sides' first warm-ups
// overlap as before).
func hostMemory(ctx context.Context, flag string) (uint64, error) {
	if flag != "" {
		n, err := scenarios.ParseSize(flag)
		if err != nil || n <= 0 {
			return 0, usagef("--host-memory %q: want a size such as 100GiB", flag)
		}
		return uint64(n), nil
	}
	if env, err := sample.Host(ctx); err == nil {
		return env.MemoryBytes, nil
	}
	return 0, nil
}

// estimatedPeak is the larger of two sides' estimated peak RSS for one
// configuration, from their strategies' bounds; 0 where either runs an
// external command, which no estimate covers.
func estimatedPeak(base, cur *run.Spec) int64 {
	if base.IsExec() || cur.IsExec() {
		return 0
	}
	return max(run.EstimateSpec(base).PeakRSS, run.EstimateSpec(cur).PeakRSS)
}

// openABOut locks ab's output folder for this ab, as run locks its own
// (a second ab into it would rewrite this one's documents), and refuses
// one that holds a finished ab (its ab.txt or ab.md, or a side's
// results): a later ab would silently replace it. Both are bad input,
// exit 2, as is a -o that is not a directory.
func openABOut(dir string) (unlock func(), err error) {
	unlock, err = run.LockOutDir(dir)
	if err != nil {
		return nil, usagef("-o %s: %w", dir, err)
	}
	finished := ""
	for _, name := range []string{"ab.txt", "ab.md"} {
		if _, serr := os.Lstat(filepath.Join(dir, name)); serr == nil {
			finished = name
		}
	}
	for _, side := range []string{"base", "new"} {
		if cerr := run.CheckFinished(filepath.Join(dir, side)); cerr != nil && finished == "" {
			finished = side + "/"
		}
	}
	if finished != "" {
		unlock()
		return nil, usagef("-o %s: holds the results of a previous ab (%s); choose another -o", dir, finished)
	}
	return unlock, nil
}

func writeABFiles(dir string, rep *compare.Report) error {
	var txt, md bytes.Buffer
	if err := rep.WriteText(&txt); err != nil {
		return err
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, "ab.txt"), txt.Bytes()); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, "ab.md"), md.Bytes())
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func orDefaultFiles(v, def []string) []string {
	if len(v) == 0 {
		return def
	}
	return v
}

// childrenLoad measures the host's load around one repetition a side's
// binary runs, counting this process and its reaped children (the side's
// run and its child) as the measured processes: ab.Runner's Load.
func childrenLoad(ctx context.Context) func() (*results.HostLoad, error) {
	m := sample.StartLoadOf(ctx, func() (float64, bool) {
		self, ok := sample.CPUSeconds(sample.Self)
		children, ok2 := sample.CPUSeconds(sample.Children)
		return self + children, ok && ok2
	})
	return m.Stop
}
