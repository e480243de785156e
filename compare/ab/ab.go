// Package ab runs two sides of a comparison interleaved on one machine, so
// that whatever load the machine carries falls on both alike: the base (a
// binary and its scenario files, typically the target branch) and the new
// side (typically the pull request). Each repetition runs as its own
// `provebench run` of the side's binary, restricted to one configuration and
// one repetition: the scenario files are the interface between the sides,
// so a base binary built from an older commit runs its own code and parses
// the scenarios itself, and its result document is read back as it wrote
// it.
//
// With Runner.WorkerReps set, each side keeps a warm process per
// configuration instead (serve.go): its prover's setup is paid once per
// worker, not once per repetition, and each repetition is still measured
// alone. A side whose binary cannot serve falls back to a run per
// repetition; Modes says which way each side ran.
//
// Order, per configuration: the warm-ups of both sides, alternating, then
// the pairs in ABBA order (base then new, new then base, ...), so that
// neither side always runs first, after the other side's caches and
// frequencies. The two repetitions of pair i carry index i on both sides;
// compare pairs them by it.
package ab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

// ErrBadInput marks a side whose binary refused its input (exit status 2):
// scenario files it cannot parse, a configuration it does not have.
var ErrBadInput = errors.New("bad input")

// Side is one side of the comparison.
type Side struct {
	// Name is "base" or "new"; results go to OutDir/Name.
	Name string
	// Exe is the provebench binary that runs this side's repetitions.
	Exe string
	// Files are the side's scenario files.
	Files []string
}

// Config is one configuration to compare: its name on both sides, how many
// pairs to measure and how many warm-ups each side gets first.
type Config struct {
	Name    string
	Pairs   int
	Warmups int
	// Timeout is the longer of the sides' repetition timeouts: a warm
	// side that has not answered a request within it (and an allowance
	// for its worker's setup) is stopped and its repetition recorded as
	// crashed; 0 means defaultTimeout.
	Timeout time.Duration
	// PeakRSS is the configuration's estimated peak RSS on either side
	// (the larger), 0 when unknown: whether two warm sides' first
	// warm-ups may overlap (alone.go).
	PeakRSS int64
}

// Runner runs the sides.
type Runner struct {
	Base, New Side
	// OutDir receives OutDir/base and OutDir/new, each an output folder
	// (results.Folder: results.json.gz, or results.json with Format
	// results.FormatJSON, results.csv and results.bench), rewritten after
	// every repetition.
	OutDir string
	// Format is the sides' documents' storage format; empty means
	// results.FormatGzip.
	Format results.Format
	// CacheDir is the proving key cache both sides use.
	CacheDir string
	// Log receives what ab does while it measures (log.go): a line per
	// pair, a side's warm process started, a verdict not yet resolved;
	// nil for silence. Terminal says Log is a terminal, where progress
	// is one line redrawn in place.
	Log      io.Writer
	Terminal bool
	// WorkerReps, when above 0, keeps each side warm: a serving process
	// per side and configuration whose workers each serve up to this many
	// repetitions (run --serve --reuse-process). 0: a run per repetition.
	WorkerReps int
	// Load, where set, starts measuring the host's load around one
	// repetition run through a side's binary, and returns what stops it
	// and reads the figures. The measured processes are the side's run and
	// its child, which the run waits for: this process's reaped children.
	// The caller supplies the probe (cmd/provebench: run/sample's), so
	// that compare links no part of the runner.
	Load func(ctx context.Context) (stop func() (*results.HostLoad, error))
	// HostMemory is the host's memory in bytes, 0 when unknown: what two
	// warm sides' estimated peaks must fit (alone.go).
	HostMemory uint64

	// runOne runs one repetition of a side; nil means the side's server,
	// or runBinary. Tests replace it with a double to exercise the
	// scheduling.
	runOne func(ctx context.Context, s *side, config string, index int, warm bool) (results.Repetition, *results.Run, error)

	// modes says how each side ran (Modes).
	modes [2]string
	// timeouts are the configurations' Timeout, by name.
	timeouts map[string]time.Duration
	// replyAllowance, when above 0, is what a warm server's reply may
	// take beyond the timeout, in place of the setup allowances (tests).
	replyAllowance time.Duration
	// alone holds, per configuration measured one side warm at a time,
	// why (alone.go); starts counts the processes each side started per
	// configuration, keyed by side and configuration name.
	alone map[string]string
	// logMu guards Log and redrawn, whether a progress line waits to be
	// redrawn (log.go).
	logMu   sync.Mutex
	redrawn bool
	// mu guards starts: both warm sides' first warm-ups run at once.
	mu     sync.Mutex
	starts map[[2]string]int
}

// Mode values: how a side's repetitions ran.
const (
	ModeWarm       = "warm workers"
	ModePerProcess = "a process per repetition"
)

// side is a side's state during a run.
type side struct {
	Side
	dir string
	doc *results.Run
	// serve: the side's binary serves repetitions; server is the one up.
	serve  bool
	server *server
	// warmFor is the configuration the side's warm process serves, ""
	// when none is up.
	warmFor string
}

// Judge looks at both sides' documents so far and returns, per
// configuration, what it wants of more pairs (none: every gated metric is
// resolved). RunUntil calls it after each round of pairs.
type Judge func(base, cur *results.Run) (more map[string]Want, err error)

// Want is what a judge wants of more pairs of one configuration: about
// how many, and whether its verdict is already in (Settled: a regression
// established, the pairs only to judge the other metrics that look
// regressed too). A settled configuration gets at most as many pairs
// again as it had when it settled: naming every regressed metric is worth
// doubling the verdict's cost, not the whole budget.
type Want struct {
	Pairs   int
	Settled bool
	// Blocked, with Pairs 0, says why more pairs cannot change the
	// verdict (a host busy for every pair so far): the configuration gets
	// none, and the log says so once.
	Blocked string
}

// Run measures every configuration and returns both sides' documents,
// which it also keeps on disk. A failed repetition is recorded and the run
// goes on; an error is returned for bad input (wrapping ErrBadInput), a
// document that cannot be written, or cancellation (ctx's error; finished
// repetitions are kept).
func (r *Runner) Run(ctx context.Context, configs []Config) (base, cur *results.Run, err error) {
	return r.RunUntil(ctx, configs, time.Time{}, nil)
}

// RunUntil is Run, then, while judge wants more pairs of some
// configurations and the deadline has not passed, more pairs of those,
// interleaved and numbered after the ones already run (ABBA order goes on
// from there), judged again after each round. No pair starts after the
// deadline; a pair in flight finishes. A nil judge or a zero deadline adds
// nothing.
func (r *Runner) RunUntil(ctx context.Context, configs []Config, deadline time.Time, judge Judge) (base, cur *results.Run, err error) {
	sides := [2]*side{{Side: r.Base}, {Side: r.New}}
	r.timeouts = make(map[string]time.Duration, len(configs))
	for _, c := range configs {
		r.timeouts[c.Name] = c.Timeout
	}
	for i, s := range sides {
		s.dir = filepath.Join(r.OutDir, s.Name)
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("output directory: %w", err)
		}
		s.doc = &results.Run{Schema: results.SchemaVersion, Tool: "provebench", StartedAt: time.Now().UTC()}
		r.modes[i] = ModePerProcess
		if r.WorkerReps > 0 && r.runOne == nil {
			if s.serve = canServe(ctx, s.Exe); s.serve {
				r.modes[i] = ModeWarm
			} else {
				r.modes[i] += " (its binary cannot serve: run --help has no --serve)"
			}
		}
	}
	defer func() {
		r.keepProgress()
		for _, s := range sides {
			s.closeServer()
		}
	}()
	docs := func() (*results.Run, *results.Run) { return sides[0].doc, sides[1].doc }
	done := make(map[string]int, len(configs)) // pairs run per configuration
	for _, cfg := range configs {
		for _, s := range sides {
			s.closeServer() // one configuration's provers at a time
		}
		if err := r.warmups(ctx, sides, cfg); err != nil {
			b, n := docs()
			return b, n, err
		}
		if err := r.pairs(ctx, sides, cfg, 1, cfg.Pairs, cfg.Pairs, time.Time{}); err != nil {
			b, n := docs()
			return b, n, err
		}
		done[cfg.Name] = cfg.Pairs
		r.keepProgress() // the configuration's last pair stays
	}
	if judge != nil && !deadline.IsZero() {
		if err := r.resolve(ctx, sides, configs, done, deadline, judge); err != nil {
			b, n := docs()
			return b, n, err
		}
	}
	for _, s := range sides {
		s.doc.Complete, s.doc.FinishedAt = true, time.Now().UTC()
		if err := r.save(s); err != nil {
			return nil, nil, err
		}
	}
	b, n := docs()
	return b, n, nil
}

// resolve adds pairs to the configurations judge wants more of, until it
// wants none or the deadline passes. It adds one ABBA round (2 pairs) at a
// time and judges again after each, so it stops as soon as the verdict is
// in, however many pairs the estimate asked for. It stays with a
// configuration while that one still wants pairs (switching would restart
// its warm sides) and otherwise turns to the one nearest to a verdict (the
// fewest pairs wanted), so that a budget too small for all of them buys the
// verdicts it can.
func (r *Runner) resolve(ctx context.Context, sides [2]*side, configs []Config, done map[string]int, deadline time.Time, judge Judge) error {
	current := ""
	settledAt := map[string]int{} // pairs run when a configuration's verdict came in
	said := map[string]bool{}     // configurations whose blocking the log has told
	for time.Now().Before(deadline) {
		wants, err := judge(sides[0].doc, sides[1].doc)
		if err != nil {
			return err
		}
		more := r.affordable(wants, done, settledAt, said)
		if more[current] <= 0 {
			current = ""
			for _, cfg := range configs {
				if n := more[cfg.Name]; n > 0 && (current == "" || n < more[current]) {
					current = cfg.Name
				}
			}
			if current == "" {
				return nil
			}
			r.logf("%s: not resolved after %d pairs: about %d more wanted", current, done[current], more[current])
		}
		cfg := configs[slices.IndexFunc(configs, func(c Config) bool { return c.Name == current })]
		from := done[current] + 1
		if err := r.pairs(ctx, sides, cfg, from, from+r.roundPairs(current)-1, 0, deadline); err != nil {
			return err
		}
		done[current] = max(done[current], lastPair(sides[0].doc, current))
	}
	return nil
}

// affordable turns the judge's wants into pairs wanted per
// configuration: a settled configuration's only while it has run fewer
// than twice the pairs it had when it settled (noted in settledAt); a
// blocked one's none, said once in the log (noted in said).
func (r *Runner) affordable(wants map[string]Want, done, settledAt map[string]int, said map[string]bool) map[string]int {
	more := make(map[string]int, len(wants))
	for name, w := range wants {
		if w.Pairs <= 0 {
			if w.Blocked != "" && !said[name] {
				said[name] = true
				r.logf("%s: not judged after %d pairs, and more pairs cannot change that while the host stays busy: %s", name, done[name], w.Blocked)
			}
			continue
		}
		if w.Settled {
			if settledAt[name] == 0 {
				settledAt[name] = done[name]
				r.logf("%s: a regression is established after %d pairs; up to %d more to judge the metrics that look regressed too", name, done[name], done[name])
			}
			if done[name] >= 2*settledAt[name] {
				continue
			}
		}
		more[name] = w.Pairs
	}
	return more
}

// lastPair is the highest pair index of a configuration in a side's
// document.
func lastPair(doc *results.Run, config string) int {
	last := 0
	for i := range doc.Scenarios {
		if doc.Scenarios[i].Name != config {
			continue
		}
		for _, rep := range doc.Scenarios[i].Repetitions {
			if !rep.Warmup {
				last = max(last, rep.Index)
			}
		}
	}
	return last
}

// warmups runs one configuration's warm-ups, the sides alternating; with
// both sides warm, the first of both first (firstWarmups: at once where
// two fit), and none after it where two do not (each side's are run as
// its block of pairs begins: pairsAlone).
func (r *Runner) warmups(ctx context.Context, sides [2]*side, cfg Config) error {
	both := sides[0].serve && sides[1].serve
	if both && cfg.Warmups == 0 && !r.fitsByEstimate(cfg) {
		r.setAlone(cfg.Name, "by the estimate: two warm sides need 2 × "+units.FormatBytes(cfg.PeakRSS)+" of peak RSS, the host has "+units.FormatBytes(int64(r.HostMemory)))
	}
	for k := 1; k <= cfg.Warmups && r.alone[cfg.Name] == ""; k++ {
		if k == 1 && both {
			if err := r.firstWarmups(ctx, sides, cfg); err != nil {
				return err
			}
			continue
		}
		for _, s := range order(sides, k) {
			if _, err := r.repetition(ctx, s, cfg.Name, k, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// pairs runs pairs from..to of a configuration in ABBA order; total is
// what the log counts them out of (0: open-ended). With a deadline, no
// pair starts after it.
func (r *Runner) pairs(ctx context.Context, sides [2]*side, cfg Config, from, to, total int, deadline time.Time) error {
	if r.alone[cfg.Name] != "" {
		return r.pairsAlone(ctx, sides, cfg, from, to, total, deadline)
	}
	for i := from; i <= to; i++ {
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return nil
		}
		var got [2]*results.Repetition
		for _, s := range order(sides, i) {
			rep, err := r.repetition(ctx, s, cfg.Name, i, false)
			if err != nil {
				return err
			}
			if s == sides[0] {
				got[0] = rep
			} else {
				got[1] = rep
			}
		}
		r.logPair(cfg.Name, i, total, got)
	}
	return nil
}

// warmTogether runs both warm sides' first warm-up at the same time. Each
// starts its side's server, whose setup (key read and on the device,
// page-locked pool, warm-up partition) is most of what the warm-up costs:
// paid one after the other, two setups can be a large share of a short
// GPU-bound verdict's windows (docs/ci-workflow.md, "What a verdict
// costs"). Nothing measured runs meanwhile, and the
// warm-ups themselves are discarded; the pairs start once both are in.
func (r *Runner) warmTogether(ctx context.Context, sides [2]*side, config string) error {
	var g errgroup.Group
	for _, s := range sides {
		g.Go(func() error {
			_, err := r.repetition(ctx, s, config, 1, true)
			return err
		})
	}
	return g.Wait()
}

// order is ABBA: base first in odd pairs, new first in even ones.
func order(sides [2]*side, i int) [2]*side {
	if i%2 == 1 {
		return sides
	}
	return [2]*side{sides[1], sides[0]}
}

func (r *Runner) logPair(config string, i, total int, got [2]*results.Repetition) {
	if r.Log == nil {
		return
	}
	describe := func(rep *results.Repetition) string {
		if rep.Status != results.StatusOK {
			return string(rep.Status)
		}
		return fmt.Sprintf("%.4g s/proof", rep.SecondsPerProof)
	}
	load := ""
	if h := got[1].HostLoad; h != nil {
		load = fmt.Sprintf(" (load %.1f)", h.Load1)
	}
	of := ""
	if total > 0 {
		of = fmt.Sprintf("/%d", total)
	}
	r.progressf("%s pair %d%s: base %s, new %s%s", config, i, of, describe(got[0]), describe(got[1]), load)
}

// NoCalibrationStoreEnv, set to 1, tells `provebench run` not to add its
// results to the calibration cache (it still predicts from it): ab sets it
// for its children.
const NoCalibrationStoreEnv = "PROVEBENCH_NO_CALIBRATION_STORE"

// repetition runs one repetition of a side's configuration through the
// side's binary, appends it to the side's document and saves it.
func (r *Runner) repetition(ctx context.Context, s *side, config string, index int, warm bool) (*results.Repetition, error) {
	runOne := r.runOne
	switch {
	case runOne != nil:
	case s.serve:
		runOne = r.serveOne
	default:
		runOne = r.runBinary
	}
	rep, sc, err := runOne(ctx, s, config, index, warm)
	if err != nil {
		return nil, err
	}
	rep.Index, rep.Warmup = index, warm
	if s.serve && rep.Status != results.StatusCrashed {
		r.noteWarm(s, config)
	}
	s.add(config, sc, rep)
	if err := r.save(s); err != nil {
		return nil, err
	}
	return &rep, nil
}

// noteWarm records that the side's warm process serves the configuration,
// counting a process started when it served another or none.
func (r *Runner) noteWarm(s *side, config string) {
	if s.warmFor == config {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.starts == nil {
		r.starts = map[[2]string]int{}
	}
	r.starts[[2]string{s.Name, config}]++
	s.warmFor = config
}

// runBinary runs one repetition of a side's configuration through the
// side's binary and reads back what it wrote.
func (r *Runner) runBinary(ctx context.Context, s *side, config string, _ int, _ bool) (results.Repetition, *results.Run, error) {
	tmp, err := os.MkdirTemp(s.dir, ".rep-")
	if err != nil {
		return results.Repetition{}, nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"run"}, s.Files...)
	args = append(args, "--filter", "^"+regexp.QuoteMeta(config)+"$", "--repeat", "1", "--warmups", "0",
		"--no-report", "--cache", r.CacheDir, "-o", tmp)
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, s.Exe, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	// One-repetition runs would push the runs pre-flight calibrates on
	// out of the calibration cache. An environment variable rather than a
	// flag, which a base binary older than it would refuse.
	cmd.Env = append(os.Environ(), NoCalibrationStoreEnv+"=1")
	cmd.WaitDelay = 10 * time.Second
	var stopLoad func() (*results.HostLoad, error)
	if r.Load != nil {
		stopLoad = r.Load(ctx)
	}
	runErr := cmd.Run()
	var hostLoad *results.HostLoad
	if stopLoad != nil {
		hostLoad, _ = stopLoad()
	}
	if ctx.Err() != nil {
		return results.Repetition{}, nil, ctx.Err()
	}
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 2 {
		return results.Repetition{}, nil, fmt.Errorf("%s side: %s %s: %w:\n%s", s.Name, s.Exe, quoteArgs(args), ErrBadInput, tail(out.Bytes()))
	}
	// The side's binary writes results.json.gz, or results.json if it
	// predates compressed documents: its folder is read as every command
	// reads one.
	rep, sc := readRepetition(tmp, runErr, out.Bytes())
	if hostLoad != nil {
		// Measured by this process for both sides alike, whatever the
		// side's binary records itself.
		rep.HostLoad = hostLoad
	}
	return rep, sc, nil
}

// readRepetition reads the single repetition a side's run wrote into path
// (its output folder, or the document itself), and the run's document
// without it (host, version, the scenario's record); a run that wrote none
// is recorded as crashed with the end of its output.
func readRepetition(path string, runErr error, output []byte) (results.Repetition, *results.Run) {
	doc, err := readDocument(path)
	if err == nil && len(doc.Scenarios) == 1 && len(doc.Scenarios[0].Repetitions) == 1 {
		rep := doc.Scenarios[0].Repetitions[0]
		doc.Scenarios[0].Repetitions = nil
		return rep, doc
	}
	why := "no results"
	switch {
	case err != nil:
		why = err.Error()
	case len(doc.Scenarios) != 1:
		why = fmt.Sprintf("%d configurations in its results, want 1", len(doc.Scenarios))
	}
	if runErr != nil {
		why = runErr.Error() + ": " + why
	}
	return results.Repetition{
		Status: results.StatusCrashed, StartedAt: time.Now().UTC(),
		Error: fmt.Sprintf("the side's run left no repetition (%s): %s", why, tail(output)),
	}, nil
}

// readDocument reads a results document given as itself or its folder.
func readDocument(path string) (*results.Run, error) {
	p, err := results.InDir(path)
	if err != nil {
		return nil, err
	}
	return results.Read(p)
}

// add appends a repetition to the side's record of the configuration,
// taking the host, the version and the scenario's record from the first
// run that wrote them.
func (s *side) add(config string, run *results.Run, rep results.Repetition) {
	if run != nil && s.doc.ToolVersion == "" {
		s.doc.ToolVersion, s.doc.Environment = run.ToolVersion, run.Environment
	}
	var sc *results.Scenario
	for i := range s.doc.Scenarios {
		if s.doc.Scenarios[i].Name == config {
			sc = &s.doc.Scenarios[i]
		}
	}
	if sc == nil {
		s.doc.Scenarios = append(s.doc.Scenarios, results.Scenario{Name: config})
		sc = &s.doc.Scenarios[len(s.doc.Scenarios)-1]
	}
	if run != nil && sc.Spec == nil {
		reps := sc.Repetitions
		*sc = run.Scenarios[0]
		sc.Repetitions = reps
	}
	if rep.Verifiable {
		sc.Verifiable = true
	}
	sc.Repetitions = append(sc.Repetitions, rep)
}

// save writes the side's folder as every command writes an output folder
// (results.Folder: the document, results.csv and results.bench), so that
// a side's repetitions so far can be read like any run's.
func (r *Runner) save(s *side) error {
	_, err := results.Folder{Dir: s.dir, Format: r.Format}.Write(s.doc)
	return err
}

// tail is the end of a side's output, for error messages.
func tail(out []byte) string {
	const keep = 2000
	out = bytes.TrimSpace(out)
	if len(out) > keep {
		out = append([]byte("..."), out[len(out)-keep:]...)
	}
	return string(out)
}

// plainArg is an argument a shell reads as written.
var plainArg = regexp.MustCompile(`^[\w./:=,^$-]+$`)

// quoteArgs writes a command line to be pasted into a shell.
func quoteArgs(args []string) string {
	var b bytes.Buffer
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if plainArg.MatchString(a) {
			b.WriteString(a)
		} else {
			b.WriteString(strconv.Quote(a))
		}
	}
	return b.String()
}
