package run

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
)

// Regression tests of issue 13 (hardening): faults during runs.

const (
	testParentEnv  = "PROVEBENCH_TEST_PARENT"  // the test binary acts as a runner
	testPIDFileEnv = "PROVEBENCH_TEST_PIDFILE" // where a sleeping child writes its pid
)

// spike touches n bytes and frees them again.
func spike(n int) {
	b := make([]byte, n)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	b = nil
	debug.FreeOSMemory()
}

// Item 5: a repetition whose RSS passed the limit between two samples (here:
// no sample at all) is a memory-limit repetition, by the child's VmHWM.
func TestMemoryLimitAgainstFinalPeak(t *testing.T) {
	r := newTestRunner(t)
	spec := smallSpec("spike", config.Hold)
	spec.Warmups, spec.Repeats = 0, 1
	spec.SampleInterval = 10 * time.Hour
	spec.MemoryLimit = 200 << 20
	t.Setenv("PROVEBENCH_TEST_CHILD", "spike")
	doc, err := r.Run(context.Background(), []Spec{spec})
	if err != nil {
		t.Fatal(err)
	}
	rep := doc.Scenarios[0].Repetitions[0]
	if rep.Status != results.StatusMemoryLimit || rep.PeakRSSBytes <= 200<<20 {
		t.Fatalf("status %s (%s), peak %d: want memory-limit above 200 MiB", rep.Status, rep.Error, rep.PeakRSSBytes)
	}
	if !strings.Contains(rep.Error, "between samples") {
		t.Errorf("error %q does not say the limit was passed between samples", rep.Error)
	}
}

// Item 5: the peak of a repetition stopped for its limit or its timeout is
// read at the kill, so it is never below an RSS the sampler saw.
func TestPeakAtKillIsFresh(t *testing.T) {
	for _, tc := range []struct {
		mutate func(*Spec)
		want   results.Status
	}{
		{func(s *Spec) { s.MemoryLimit = 96 << 20 }, results.StatusMemoryLimit},
		{func(s *Spec) { s.Timeout = 400 * time.Millisecond }, results.StatusTimeout},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			r := newTestRunner(t)
			spec := smallSpec("hog", config.Hold)
			spec.Warmups, spec.Repeats = 0, 1
			tc.mutate(&spec)
			t.Setenv("PROVEBENCH_TEST_CHILD", "hog")
			doc, err := r.Run(context.Background(), []Spec{spec})
			if err != nil {
				t.Fatal(err)
			}
			rep := doc.Scenarios[0].Repetitions[0]
			if rep.Status != tc.want {
				t.Fatalf("status %s (%s)", rep.Status, rep.Error)
			}
			// The kernel's RSS counters are cached per CPU, so two reads
			// may disagree by a few pages; a stale read is tens of MiB
			// behind (the child grows 16 MiB per 5 ms).
			const skew = 1 << 20
			if rep.PeakRSSSource != results.PeakFromSampledVmHWM || rep.PeakRSSBytes+skew < rep.PeakRSSSampledBytes {
				t.Fatalf("peak %d (%s) below the sampled RSS %d: read before the kill", rep.PeakRSSBytes, rep.PeakRSSSource, rep.PeakRSSSampledBytes)
			}
		})
	}
}

// runTestParent is a runner in a process of its own, whose child sleeps:
// TestChildDiesWithItsParent kills it.
func runTestParent() {
	exe, _ := os.Executable()
	r := &Runner{Exe: exe, OutDir: os.Getenv(testParentEnv), CacheDir: cacheDir}
	spec := smallSpec("orphan", config.Hold)
	spec.Warmups, spec.Repeats = 0, 1
	_, _ = r.Run(context.Background(), []Spec{spec})
	os.Exit(0)
}

// Item 6: SIGKILL of the parent takes the child with it.
func TestChildDiesWithItsParent(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe, "-test.run", "^$")
	parent.Env = append(os.Environ(), testParentEnv+"="+filepath.Join(dir, "out"), testPIDFileEnv+"="+pidFile, "PROVEBENCH_TEST_CHILD=sleep")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	for deadline := time.Now().Add(30 * time.Second); child == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
			child, _ = strconv.Atoi(string(b))
		}
		if time.Now().After(deadline) {
			parent.Process.Kill()
			t.Fatal("the child never started")
		}
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	for deadline := time.Now().Add(5 * time.Second); alive(child); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("child %d outlived its parent", child)
		}
	}
}

// alive reports whether pid runs (a zombie does not: it waits only to be
// reaped by whoever adopted it).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// Item 6: a child whose parent is not the one that started it does not run.
func TestChildChecksItsParent(t *testing.T) {
	job := `{"spec":{"name":"x"},"parent_pid":` + strconv.Itoa(os.Getpid()) + `}`
	var stream strings.Builder
	err := ChildMain(context.Background(), strings.NewReader(job), &stream)
	if err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Fatalf("err = %v, want the parent check to refuse", err)
	}
}

// Item 7: a results file that cannot be written mid-sweep keeps the sweep.
func TestUnwritableResultsKeepTheSweep(t *testing.T) {
	r := newTestRunner(t)
	a, b := smallSpec("a", config.Hold), smallSpec("b", config.Hold)
	a.Warmups, a.Repeats, b.Warmups, b.Repeats = 0, 1, 0, 1
	var warnings strings.Builder
	r.Warn = &warnings
	path := r.ResultsPath()
	// After the first repetition, results.json becomes a directory that
	// no rename can replace.
	r.Progress = &onFirstEnd{fn: func() {
		os.Remove(path)
		os.MkdirAll(filepath.Join(path, "blocker"), 0o755)
	}}
	doc, err := r.Run(context.Background(), []Spec{a, b})
	if err == nil {
		t.Fatal("no error for an unwritable results file")
	}
	if doc == nil || len(doc.Scenarios) != 2 || !doc.Complete {
		t.Fatalf("the sweep did not go on: %+v", doc)
	}
	_, kept, ok := strings.Cut(err.Error(), "the results are in ")
	if !ok {
		t.Fatalf("error %q names no copy", err)
	}
	defer os.Remove(kept)
	copyDoc, rerr := results.Read(kept)
	if rerr != nil || len(copyDoc.Scenarios) != 2 {
		t.Fatalf("copy %s: %v", kept, rerr)
	}
	if !strings.Contains(warnings.String(), "cannot write") {
		t.Errorf("no warning: %q", warnings.String())
	}
}

type onFirstEnd struct {
	nopProgress
	fn   func()
	done bool
}

func (o *onFirstEnd) RepetitionEnd(*Spec, *results.Repetition) {
	if !o.done {
		o.done = true
		o.fn()
	}
}

// Item 8: one run per output directory.
func TestOutDirLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	unlock, err := LockOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockOutDir(dir); !errors.Is(err, ErrOutDir) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	unlock2, err := LockOutDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := LockOutDir(filepath.Join(file, "out")); !errors.Is(err, ErrOutDir) {
		t.Fatalf("a directory under a file: %v", err)
	}
}
