//go:build linux

package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/provebench/provebench/internal/fsname"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/supervise"
)

// What the exec driver does before a configuration's repetitions, and
// before each: its files, its setup commands, each contained as a
// repetition's command is.

// Prepare makes the configuration's directory and runs its setup commands,
// once before its repetitions.
func (d *Driver) Prepare(ctx context.Context, spec *Spec, sc *results.Scenario) error {
	data, err := d.data(spec, 0, false)
	if err != nil {
		return err
	}
	if err := makeConfigDir(data.Dir, data.OutDir); err != nil {
		return err
	}
	e, err := spec.Exec.Render(data)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if err := writeFiles(e.Files, data.Dir, data.OutDir); err != nil {
		return err
	}
	for i, argv := range e.Setup {
		if len(argv) == 0 {
			continue
		}
		if d.Log != nil {
			fmt.Fprintf(d.Log, "%s: setup: %s\n", spec.Name, strings.Join(argv, " "))
		}
		out, err := d.setup(ctx, spec, e, argv)
		if err != nil {
			return fmt.Errorf("exec.setup[%d] (%s): %w: %s", i, strings.Join(argv, " "), err, lastLines(out, 10))
		}
	}
	return nil
}

// setup runs one setup command under the supervisor, as a repetition's
// command runs: what it leaves behind (a daemon in a session of its own, a
// child holding its output) ends with it, and it is stopped at the
// scenario's timeout or when the run is interrupted. It returns the tail
// of the command's output.
func (d *Driver) setup(ctx context.Context, spec *Spec, e *ExecSpec, argv []string) (string, error) {
	grace := e.StopGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	job, err := json.Marshal(shimJob{Command: argv, Env: execEnv(e.Env), Dir: e.Dir, Grace: grace, ParentPID: os.Getpid()})
	if err != nil {
		return "", err
	}
	runtime.LockOSThread() // see startShim
	defer runtime.UnlockOSThread()
	out := &supervise.TailBuffer{Max: stderrKeep}
	var res *shimResult
	keep := func(r io.Reader) { _, _ = io.Copy(out, r) }
	sp, err := startShim(d.Exe, job, keep, keep, func(r io.Reader) {
		dec := json.NewDecoder(r)
		for {
			var m shimMsg
			if dec.Decode(&m) != nil {
				return
			}
			if m.Kind == shimDone {
				res = m.Done
			}
		}
	})
	if err != nil {
		return "", err
	}
	stopped, _ := supervise.Watch(ctx, sp.exited, &setupTarget{cmd: sp.cmd, grace: grace}, supervise.Config{Interval: time.Hour, Timeout: spec.Timeout})
	sp.readers.Wait()
	switch {
	case stopped.Status != "":
		return out.String(), stopped.Err
	case res == nil:
		return out.String(), fmt.Errorf("exec supervisor %s without an account", supervise.DescribeExit(sp.cmd.ProcessState))
	case res.Error != "":
		return out.String(), errors.New(res.Error)
	case res.Figures.ExitSignal != "":
		return out.String(), fmt.Errorf("killed by signal %s", res.Figures.ExitSignal)
	case res.exitCode() != 0:
		return out.String(), fmt.Errorf("exit status %d", res.exitCode())
	}
	return out.String(), nil
}

// setupTarget is a setup command's supervisor for the supervising loop:
// nothing is sampled, only the timeout and interrupts apply.
type setupTarget struct {
	cmd   *osexec.Cmd
	grace time.Duration
}

func (setupTarget) Sample(time.Time, bool) (uint64, bool) { return 0, false }

func (t *setupTarget) Stop(supervise.Reason) time.Duration {
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	return t.grace + 5*time.Second
}

func (t *setupTarget) Kill() { _ = t.cmd.Process.Kill() }

// writeFiles writes the rendered files, each inside the output directory
// out (a swept value of ".." must not write elsewhere). Each path is
// resolved beneath out (os.Root): a folder or a file of its path that is
// a symbolic link leading out of out is refused, not followed.
func writeFiles(files []ExecFile, dir, out string) error {
	if len(files) == 0 {
		return nil
	}
	root, err := os.OpenRoot(out)
	if err != nil {
		return fmt.Errorf("exec.files: %w", err)
	}
	defer root.Close()
	for i, f := range files {
		path, err := filePath(f.Path, dir, out)
		if err != nil {
			return fmt.Errorf("exec.files[%d]: %w", i, err)
		}
		rel, err := filepath.Rel(out, path)
		if err != nil {
			return fmt.Errorf("exec.files[%d]: %w", i, err)
		}
		if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return fmt.Errorf("exec.files[%d]: %w", i, fsname.RootPath(out, err))
		}
		if err := root.WriteFile(rel, []byte(f.Content), 0o644); err != nil {
			return fmt.Errorf("exec.files[%d]: %w", i, fsname.RootPath(out, err))
		}
	}
	return nil
}

// filePath resolves a rendered file path (relative to the configuration's
// directory dir) and refuses one outside the output directory out.
func filePath(path, dir, out string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	path = filepath.Clean(path)
	rel, err := filepath.Rel(out, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || rel == "." {
		return "", fmt.Errorf("path %s is outside the output directory %s", path, out)
	}
	return path, nil
}

// makeConfigDir makes a configuration's directory dir beneath the output
// directory out, refusing a folder on the way that is a symbolic link
// leading out of it: the command runs there and writes its files there.
func makeConfigDir(dir, out string) error {
	rel, err := filepath.Rel(out, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("exec: %s is outside the output directory %s", dir, out)
	}
	root, err := os.OpenRoot(out)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	defer root.Close()
	if err := root.MkdirAll(rel, 0o755); err != nil {
		return fmt.Errorf("exec: %w", fsname.RootPath(out, err))
	}
	return nil
}

// CheckPaths renders every exec configuration's files as its first
// repetition would and refuses, before anything is written, a path
// outside the output directory outDir, written so or through a symbolic
// link already there (the configuration's folder or the file itself).
func CheckPaths(specs []Spec, outDir string) error {
	d := &Driver{OutDir: outDir}
	var root *os.Root
	if rt, err := os.OpenRoot(outDir); err == nil {
		root = rt
		defer root.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("-o %s: %w", outDir, err)
	}
	var errs []error
	for i := range specs {
		s := &specs[i]
		if !s.IsExec() || len(s.Exec.Files) == 0 {
			continue
		}
		data, err := d.data(s, 0, false)
		if err != nil {
			return err
		}
		e, err := s.Exec.Render(data)
		if err != nil {
			continue // a template error fails the configuration when it runs, as before
		}
		for j, f := range e.Files {
			path, err := filePath(f.Path, data.Dir, data.OutDir)
			if err == nil && root != nil {
				err = beneath(root, data.OutDir, path)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): exec.files[%d].path: %w", s.Name, s.Source, j, err))
			}
		}
	}
	return errors.Join(errs...)
}

// beneath refuses a path inside the output directory out (root) that
// leads out of it through a symbolic link that exists now; one that does
// not exist yet is fine (it will be made beneath out).
func beneath(root *os.Root, out, path string) error {
	rel, err := filepath.Rel(out, path)
	if err != nil {
		return err
	}
	if _, err := root.Stat(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fsname.RootPath(out, err)
	}
	return nil
}

func execEnv(extra map[string]string) []string {
	env := os.Environ()
	for _, k := range slices.Sorted(mapKeys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// lastLines keeps the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
