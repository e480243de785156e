package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// runCommand runs a go test -json command (the arguments after --),
// writing its events to the -json file and printing them as go test
// without -json would. The file is written beside its final name and
// renamed into place when the command ends, failed tests or not: a run
// that could not finish leaves no file behind.
func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	out, argv, err := parseRunArgs(args)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	defer tmp.Close()

	cmd, pipe, err := startCommand(ctx, argv, stderr)
	if err != nil {
		return 0, err
	}
	f := newFollower(stdout)
	w := bufio.NewWriter(tmp)
	readErr := followEvents(pipe, f, w, stdout)
	if readErr != nil {
		_ = cmd.Process.Kill() // nobody reads its output any more
	}
	waitErr := cmd.Wait()
	f.finish()
	if readErr != nil {
		return 0, fmt.Errorf("run: reading %s's output: %w", argv[0], readErr)
	}

	code, err := exitStatus(waitErr)
	if err != nil {
		return 0, err
	}
	if f.events == 0 {
		if code != exitOK {
			return code, nil // the command failed before testing; it said why on stderr
		}
		return 0, fmt.Errorf("run: %s printed no test events (go test without -json?)", argv[0])
	}
	if code == exitOK && f.failed() {
		code = exitFailed
	}
	if err := keepEvents(w, tmp, out); err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "testsummary: %s: %s\n", filepath.Base(out), f.tally)
	return code, nil
}

// parseRunArgs reads run's arguments: the -json file and the command.
func parseRunArgs(args []string) (out string, argv []string, err error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&out, "json", "", "`file` the command's events are written to")
	if err := fs.Parse(args); err != nil {
		return "", nil, usageError("run: " + err.Error())
	}
	argv = fs.Args()
	if out == "" || len(argv) == 0 {
		return "", nil, usageError("run: -json FILE and a command after -- are needed")
	}
	return out, argv, nil
}

// startCommand starts argv with its standard output on the returned pipe
// and its standard error on stderr.
func startCommand(ctx context.Context, argv []string, stderr io.Writer) (*exec.Cmd, io.ReadCloser, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = stderr
	// go test stops its test binaries on an interrupt; a kill would orphan them.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("run: %w", err)
	}
	return cmd, pipe, nil
}

// followEvents reads the command's output until it ends: each event goes
// to f and, a line each, to w; a line that is not an event goes to stdout
// as it was.
func followEvents(pipe io.Reader, f *follower, w io.Writer, stdout io.Writer) error {
	return readLines(pipe, func(line []byte) error {
		e, ok, err := decodeEvent(line)
		if err != nil || !ok {
			_, werr := stdout.Write(line) // a line go test printed plainly
			return werr
		}
		f.add(e)
		if line[len(line)-1] != '\n' {
			line = append(line, '\n')
		}
		_, err = w.Write(line)
		return err
	})
}

// exitStatus is the command's exit status from its wait error, a signal's
// death counted as a failure; an error where it could not be waited for.
func exitStatus(waitErr error) (int, error) {
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		code := exit.ExitCode()
		if code <= 0 { // killed by a signal
			code = exitFailed
		}
		return code, nil
	case waitErr != nil:
		return 0, fmt.Errorf("run: %w", waitErr)
	}
	return exitOK, nil
}

// keepEvents writes out what w holds of tmp and renames tmp into place
// as out.
func keepEvents(w *bufio.Writer, tmp *os.File, out string) error {
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

// follower prints a go test -json stream as go test without -json would:
// the packages' own lines, and a test's output only when it fails. A
// test's output is held until it ends.
type follower struct {
	w           io.Writer
	pending     map[testKey][]string
	tally       tally
	events      int
	failedPkgs  int
	buildFailed int
}

func newFollower(w io.Writer) *follower {
	return &follower{w: w, pending: make(map[testKey][]string)}
}

func (f *follower) add(e event) {
	f.events++
	f.tally.add(e)
	switch {
	case e.Action == "build-output":
		io.WriteString(f.w, e.Output)
	case e.Action == "build-fail":
		f.buildFailed++
	case e.Test != "":
		k := testKey{e.Package, e.Test}
		switch e.Action {
		case "output":
			f.pending[k] = append(f.pending[k], e.Output)
		case "fail":
			f.flush(k)
		case "pass", "skip":
			delete(f.pending, k)
		}
	default: // the package's own events
		switch e.Action {
		case "output":
			if e.Output != "PASS\n" { // -json implies -v, which adds it
				io.WriteString(f.w, e.Output)
			}
		case "fail":
			f.failedPkgs++
			// Tests cut short (a panic, a timeout) never end: their
			// output says what happened.
			f.flushPackage(e.Package)
		case "pass", "skip":
			for _, k := range f.pendingKeys(e.Package, false) {
				delete(f.pending, k)
			}
		}
	}
}

// finish prints the output of tests whose package never ended (the
// command was stopped).
func (f *follower) finish() {
	for _, k := range f.pendingKeys("", true) {
		f.flush(k)
	}
}

func (f *follower) failed() bool {
	return f.tally.failed > 0 || f.failedPkgs > 0 || f.buildFailed > 0
}

func (f *follower) flush(k testKey) {
	for _, s := range f.pending[k] {
		io.WriteString(f.w, s)
	}
	delete(f.pending, k)
}

func (f *follower) flushPackage(pkg string) {
	for _, k := range f.pendingKeys(pkg, false) {
		f.flush(k)
	}
}

// pendingKeys lists the held tests of pkg (of every package with all),
// in name order so that what is printed does not depend on map order.
func (f *follower) pendingKeys(pkg string, all bool) []testKey {
	var keys []testKey
	for k := range f.pending {
		if all || k.pkg == pkg {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b testKey) int {
		return cmp.Or(cmp.Compare(a.pkg, b.pkg), cmp.Compare(a.test, b.test))
	})
	return keys
}
