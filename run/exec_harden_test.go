//go:build linux

package run

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

// Regression tests of issues 20 and 21 for the exec driver.

// Issue 21: the exec driver holds the tree's final peak to memory_limit,
// as the in-process driver does: a command that passes the limit before
// the first sample is a memory-limit repetition, not ok.
func TestExecMemoryLimitAgainstFinalPeak(t *testing.T) {
	exe, _ := os.Executable()
	spec := execSpec("spike", &ExecSpec{Command: []string{exe, "exec-helper", "alloc", "160", "20ms"}})
	spec.SampleInterval = 10 * time.Hour // no sample: only the kernel's peak sees it
	spec.MemoryLimit = 100 << 20
	rep := runExec(t, spec)[0]
	if rep.Status != results.StatusMemoryLimit {
		t.Fatalf("status %s (%s), peak %d MiB (%s): want memory-limit", rep.Status, rep.Error, rep.PeakRSSBytes>>20, rep.PeakRSSSource)
	}
	if rep.PeakRSSSource != results.PeakFromCgroup && !strings.Contains(rep.Error, "between samples") {
		t.Errorf("error %q does not say the limit was passed between samples", rep.Error)
	}
}

// testExecParentEnv makes the test binary a runner of one exec
// configuration whose command (or setup, with the value "setup") starts an
// escapee; testPIDFileEnv is where the escapee writes its pid.
const testExecParentEnv = "PROVEBENCH_TEST_EXEC_PARENT"

func runTestExecParent() {
	exe, _ := os.Executable()
	pidFile := os.Getenv(testPIDFileEnv)
	spec := execSpec("orphan", &ExecSpec{Command: []string{exe, "exec-helper", "spawn-escapee-and-wait", pidFile}})
	if os.Getenv(testExecParentEnv) == "setup" {
		spec.Exec.Setup = [][]string{spec.Exec.Command}
		spec.Exec.Command = []string{"true"}
	}
	r := &Runner{Exe: exe, OutDir: filepath.Join(filepath.Dir(pidFile), "out"), CacheDir: cacheDir}
	_, _ = r.Run(context.Background(), []Spec{spec})
	os.Exit(0)
}

// withMarker lists the running processes whose command line contains
// marker.
func withMarker(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(cmdline), marker) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Issue 20 items 1 and 2: SIGKILL of the runner during an exec repetition,
// or during an exec setup, leaves nothing of it running, not even a
// process that left the session and ignores SIGTERM.
func TestExecNothingOutlivesAKilledRunner(t *testing.T) {
	for _, phase := range []string{"command", "setup"} {
		t.Run(phase, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "escapee.pid")
			exe, _ := os.Executable()
			parent := exec.Command(exe, "-test.run", "^$")
			parent.Env = append(os.Environ(), testExecParentEnv+"="+phase, testPIDFileEnv+"="+pidFile)
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(pidFile); err == nil {
					break
				}
				if time.Now().After(deadline) {
					_ = parent.Process.Kill()
					t.Fatal("the escapee never started")
				}
			}
			if got := withMarker(dir); len(got) < 2 {
				t.Fatalf("processes with the marker before the kill: %v, want the command and its escapee", got)
			}
			if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = parent.Wait()
			// The supervisor gives SIGTERM its grace (200 ms), then SIGKILL.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				left := withMarker(dir)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					for _, pid := range left {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
					t.Fatalf("pids %v outlived their runner", left)
				}
			}
		})
	}
}

// Issue 20 item 2: a setup command runs contained: what it leaves behind
// ends with it, and a hung one is stopped at the scenario's timeout.
func TestExecSetupContained(t *testing.T) {
	exe, _ := os.Executable()
	pidFile := filepath.Join(t.TempDir(), "escapee.pid")
	left := execSpec("left", &ExecSpec{Command: []string{"true"}, Setup: [][]string{{exe, "exec-helper", "spawn-escapee", pidFile}}})
	hung := execSpec("hung", &ExecSpec{Command: []string{"true"}, Setup: [][]string{{"sleep", "60"}}})
	hung.Timeout = 300 * time.Millisecond
	start := time.Now()
	reps := runExec(t, left, hung)
	if reps[0].Status != results.StatusOK {
		t.Fatalf("left: status %s (%s)", reps[0].Status, reps[0].Error)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if pid, _ := strconv.Atoi(string(data)); alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the setup's escapee (pid %d) outlived the setup", pid)
	}
	if reps[1].Status != results.StatusFailed || !strings.Contains(reps[1].Error, "timeout") {
		t.Errorf("hung: status %s (%s), want failed at the timeout", reps[1].Status, reps[1].Error)
	}
	// The hung setup sleeps 60 s; stopped at its 300 ms timeout the two
	// repetitions take about a second, and 20 s leaves a loaded 2-core
	// runner (load 10) room while still telling the timeout from the end.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s: the hung setup was not stopped at its timeout", d)
	}
}

// Issue 20 item 15: the peak is the command's tree's, not the
// supervisor's: a command that exits before any sample no longer measures
// the supervisor's peak, which wait4 folds into its children's ru_maxrss.
func TestExecPeakLeavesOutTheSupervisor(t *testing.T) {
	// Unsampled: only wait4's figure, which folds in the supervisor's.
	unsampled := execSpec("unsampled", &ExecSpec{Command: []string{"true"}})
	unsampled.SampleInterval = 10 * time.Hour
	// Sampled every millisecond: some sample falls between the fork and
	// the exec, when the child's resident set is still the supervisor's.
	sampled := execSpec("sampled", &ExecSpec{Command: []string{"true"}})
	sampled.SampleInterval = time.Millisecond
	sampled.Repeats = 30
	for _, rep := range runExec(t, unsampled, sampled) {
		if rep.Status != results.StatusOK {
			t.Fatalf("status %s (%s)", rep.Status, rep.Error)
		}
		// true's own resident set is a few hundred KiB; the supervisor
		// (this test binary) has tens of MiB.
		if rep.PeakRSSSource != results.PeakFromCgroup && rep.PeakRSSBytes >= 4<<20 {
			t.Errorf("repetition %d: peak %d KiB (%s) for true: the supervisor's memory counted as the command's", rep.Index, rep.PeakRSSBytes>>10, rep.PeakRSSSource)
		}
		// No backend reports a device's busy time: absent, not 0.
		if rep.DeviceBusyFraction != nil {
			t.Errorf("device busy fraction %v, want absent", *rep.DeviceBusyFraction)
		}
	}
}

// Issue 20 item 9: an exec repetition's events are held to the same
// balance as the built-in pipeline's counters, and lines with absurd
// offsets are counted in the record rather than read.
func TestExecBalanceAndRejectedLines(t *testing.T) {
	unbalanced := execSpec("unbalanced", &ExecSpec{Timeline: true, Command: []string{"sh", "-c",
		"echo TIMELINE,0,SYNTH_START,1,p >&2; echo TIMELINE,1,SYNTH_END,1,p >&2; echo TIMELINE,2,GPU_START,1,p >&2"}})
	absurd := execSpec("absurd", &ExecSpec{Timeline: true, Command: []string{"sh", "-c",
		"echo TIMELINE,0,SYNTH_START,1,p >&2; echo TIMELINE,NaN,SYNTH_END,1,p >&2; echo TIMELINE,1e12,SYNTH_END,1,p >&2; echo TIMELINE,4,SYNTH_END,1,p >&2; echo TIMELINE,5,GPU_START,1,p >&2; echo TIMELINE,9,GPU_END,1,p >&2"}})
	reps := runExec(t, unbalanced, absurd)
	if r := reps[0]; r.Status != results.StatusFailed || !strings.Contains(r.Error, "counter on_gpu ended at 1") {
		t.Errorf("unbalanced: status %s (%s), want failed on on_gpu", r.Status, r.Error)
	}
	r := reps[1]
	if r.Status != results.StatusOK || r.RejectedLines != 2 || !strings.Contains(r.RejectedLine, "NaN") {
		t.Errorf("absurd: status %s (%s), rejected %d (%s)", r.Status, r.Error, r.RejectedLines, r.RejectedLine)
	}
	if !(math.Abs(r.WallSeconds-0.009) <= 1e-9) {
		t.Errorf("absurd: wall %g s, want the 9 ms of the plausible events", r.WallSeconds)
	}
}

// A process re-parented to the supervisor (its parent exited) is still
// the command's and still sampled: leaving out the supervisor's vforked
// children before their exec must not leave out its adopted ones. The
// command lives as long as the adopted allocator (its pid file appears
// once the 64 MiB are resident, it holds them 1 s, and the supervisor
// reaps it), however late a loaded machine starts it; a fixed sleep of the
// shell could end the repetition before the allocation.
func TestExecSamplesAdoptedProcesses(t *testing.T) {
	exe, _ := os.Executable()
	script := `( "$0" exec-helper alloc 64 1s "$1" 1 & )
until [ -n "$(ls "$1")" ]; do sleep 0.01; done
pid=$(ls "$1")
while kill -0 "$pid" 2>/dev/null; do sleep 0.01; done`
	spec := execSpec("adopted", &ExecSpec{Command: []string{"sh", "-c", script, exe, t.TempDir()}})
	rep := runExec(t, spec)[0]
	if rep.Status != results.StatusOK {
		t.Fatalf("status %s (%s)", rep.Status, rep.Error)
	}
	if rep.PeakRSSSampledBytes < 64<<20 {
		t.Errorf("sampled peak %d MiB, want >= 64: the adopted allocator was not sampled", rep.PeakRSSSampledBytes>>20)
	}
}
