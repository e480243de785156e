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
// Order, per configuration: the warm-ups of both sides, alternating, then
// the pairs in ABBA order (base then new, new then base, ...), so that
// neither side always runs first, after the other side's caches and
// frequencies. The two repetitions of pair i carry index i on both sides;
// bench/compare pairs them by it.
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
	"strconv"
	"time"

	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/bench/sample"
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
}

// Runner runs the sides.
type Runner struct {
	Base, New Side
	// OutDir receives OutDir/base/results.json.gz and
	// OutDir/new/results.json.gz (results.json with Format
	// results.FormatJSON), rewritten after every repetition.
	OutDir string
	// Format is the sides' documents' storage format; empty means
	// results.FormatGzip.
	Format results.Format
	// CacheDir is the proving key cache both sides use.
	CacheDir string
	// Log receives one line per pair; nil for silence.
	Log io.Writer
}

// side is a side's state during a run.
type side struct {
	Side
	dir string
	doc *results.Run
}

// Run measures every configuration and returns both sides' documents,
// which it also keeps on disk. A failed repetition is recorded and the run
// goes on; an error is returned for bad input (wrapping ErrBadInput), a
// document that cannot be written, or cancellation (ctx's error; finished
// repetitions are kept).
func (r *Runner) Run(ctx context.Context, configs []Config) (base, cur *results.Run, err error) {
	sides := [2]*side{{Side: r.Base}, {Side: r.New}}
	for _, s := range sides {
		s.dir = filepath.Join(r.OutDir, s.Name)
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("output directory: %w", err)
		}
		s.doc = &results.Run{Schema: results.SchemaVersion, Tool: "provebench", StartedAt: time.Now().UTC()}
	}
	docs := func() (*results.Run, *results.Run) { return sides[0].doc, sides[1].doc }
	for _, cfg := range configs {
		if err := r.config(ctx, sides, cfg); err != nil {
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

// config runs one configuration's warm-ups and pairs.
func (r *Runner) config(ctx context.Context, sides [2]*side, cfg Config) error {
	for k := 1; k <= cfg.Warmups; k++ {
		for _, s := range order(sides, k) {
			if _, err := r.repetition(ctx, s, cfg.Name, k, true); err != nil {
				return err
			}
		}
	}
	for i := 1; i <= cfg.Pairs; i++ {
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
		r.logPair(cfg, i, got)
	}
	return nil
}

// order is ABBA: base first in odd pairs, new first in even ones.
func order(sides [2]*side, i int) [2]*side {
	if i%2 == 1 {
		return sides
	}
	return [2]*side{sides[1], sides[0]}
}

func (r *Runner) logPair(cfg Config, i int, got [2]*results.Repetition) {
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
	fmt.Fprintf(r.Log, "%s pair %d/%d: base %s, new %s%s\n", cfg.Name, i, cfg.Pairs, describe(got[0]), describe(got[1]), load)
}

// repetition runs one repetition of a side's configuration through the
// side's binary, appends it to the side's document and saves it.
func (r *Runner) repetition(ctx context.Context, s *side, config string, index int, warm bool) (*results.Repetition, error) {
	tmp, err := os.MkdirTemp(s.dir, ".rep-")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"run"}, s.Files...)
	args = append(args, "--filter", "^"+regexp.QuoteMeta(config)+"$", "--repeat", "1", "--warmups", "0",
		"--no-report", "--cache", r.CacheDir, "-o", tmp)
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, s.Exe, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	load := sample.StartLoad(ctx)
	runErr := cmd.Run()
	hostLoad, _ := load.Stop()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 2 {
		return nil, fmt.Errorf("%s side: %s %s: %w:\n%s", s.Name, s.Exe, quoteArgs(args), ErrBadInput, tail(out.Bytes()))
	}
	// The side's binary writes results.json.gz, or results.json if it
	// predates compressed documents.
	path, err := results.Find(tmp)
	if err != nil {
		path = filepath.Join(tmp, results.FormatGzip.FileName())
	}
	rep, sc := readRepetition(path, runErr, out.Bytes())
	rep.Index, rep.Warmup = index, warm
	if hostLoad != nil {
		// Measured by this process for both sides alike, whatever the
		// side's binary records itself.
		rep.HostLoad = hostLoad
	}
	s.add(config, sc, rep)
	if err := r.save(s); err != nil {
		return nil, err
	}
	return &rep, nil
}

// readRepetition reads the single repetition a side's run wrote, and the
// run's document without it (host, version, the scenario's record); a run
// that wrote none is recorded as crashed with the end of its output.
func readRepetition(path string, runErr error, output []byte) (results.Repetition, *results.Run) {
	doc, err := results.Read(path)
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

func (r *Runner) save(s *side) error {
	f := r.Format
	if f == "" {
		f = results.FormatGzip
	}
	if err := results.WriteFormat(filepath.Join(s.dir, f.FileName()), s.doc, f); err != nil {
		return err
	}
	return results.RemoveOthers(s.dir, f)
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
