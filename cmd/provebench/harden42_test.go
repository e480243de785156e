//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// markedProcesses lists the running processes whose command line holds
// marker.
func markedProcesses(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err == nil && strings.Contains(string(cmdline), marker) && !strings.Contains(string(stat), ") Z ") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Issue 42 case 4: a runner SIGKILLed during an exec repetition leaves its
// supervisor's output pipes without a reader. The supervisor's parent-death
// signal (SIGTERM) reached main's handler, whose "interrupted: stopping"
// line on the dead pipe killed the supervisor (SIGPIPE) before it ended
// the tree: the command and its grandchildren ran on. The supervisor, as
// main runs it, must end its tree however its pipes are.
func TestExecShimEndsItsTreeWithItsPipesGone(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	job, _ := json.Marshal(map[string]any{
		"command": []string{"sh", "-c", `(sleep 1000; :) & setsid sh -c "sleep 1001; :" "$0" & wait`, marker},
		"grace":   200 * time.Millisecond,
	})
	exe, _ := os.Executable()
	shim := exec.Command(exe, "exec-shim")
	shim.Env = append(os.Environ(), signalsEnv+"=1")
	shim.Stdin = strings.NewReader(string(job))
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	streamR, streamW, _ := os.Pipe()
	shim.Stdout, shim.Stderr, shim.ExtraFiles = outW, errW, []*os.File{streamW}
	if err := shim.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	streamW.Close()
	defer func() {
		for _, pid := range markedProcesses(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	// Started: the stream says so; then the runner "dies": every reader
	// of the supervisor's pipes is gone, and the parent-death SIGTERM.
	buf := make([]byte, 256)
	if n, err := streamR.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "started") {
		t.Fatalf("stream: %q, %v", buf[:n], err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(markedProcesses(marker)) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the tree never started: %v", markedProcesses(marker))
		}
	}
	outR.Close()
	errR.Close()
	streamR.Close()
	if err := shim.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = shim.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left := markedProcesses(marker)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pids %v outlived their supervisor (%s)", left, shim.ProcessState)
		}
	}
}

// Issue 42 case 6: a base binary that crashes every repetition was
// reported as "results come from different hardware (cpu_model "" /
// cpus 0)", exit 2: its empty record read as another machine. It is a
// side that measured nothing, said as such, exit 1.
func TestABCrashingSideIsNamed(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	crash := writeFile(t, dir, "crash.sh", "#!/bin/sh\n"+
		"case \"$*\" in *--help*|validate*) \""+self+"\" \"$@\" | grep -v -- '--serve'; exit 0;; esac\n"+
		"echo 'not json'; kill -SEGV $$\n")
	if err := os.Chmod(crash, 0o755); err != nil {
		t.Fatal(err)
	}
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	code, stdout, stderr := capture(t, "ab", scen, "--filter", "^hold$", "--pairs", "6", "--warmups", "0", "--base-binary", crash, "-o", filepath.Join(dir, "ab"))
	if code != exitFailure || !strings.Contains(stderr, "the base side measured nothing") || strings.Contains(stdout+stderr, "different hardware") {
		t.Errorf("exit %d\nstdout %s\nstderr %s\nwant exit 1 naming the base side", code, stdout, stderr)
	}
}

// Issue 42 case 8: ab's output folder is locked as run's is, a finished
// one is not replaced, and a -o that is a regular file is bad input (exit
// 2), for ab and for history show.
func TestABOutputFolder(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	file := writeFile(t, dir, "file", "mine")
	if code, _, stderr := capture(t, "ab", scen, "-o", file); code != exitUsage || !strings.Contains(stderr, file) {
		t.Errorf("ab -o a regular file: exit %d, %s", code, stderr)
	}
	if code, _, stderr := capture(t, "history", "show", "--db", filepath.Join(dir, "none.db"), "-o", file); code != exitUsage {
		t.Errorf("history show -o a regular file: exit %d, %s", code, stderr)
	}
	finished := filepath.Join(dir, "finished")
	if err := os.Mkdir(finished, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, finished, "ab.txt", "OK: an earlier ab")
	if code, _, stderr := capture(t, "ab", scen, "-o", finished); code != exitUsage || !strings.Contains(stderr, "previous ab") {
		t.Errorf("ab into a finished folder: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(finished, "ab.txt")); string(b) != "OK: an earlier ab" {
		t.Errorf("the finished ab.txt was rewritten: %q", b)
	}
	busy := filepath.Join(dir, "busy")
	unlock, err := openABOut(busy)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if code, _, stderr := capture(t, "ab", scen, "-o", busy); code != exitUsage || !strings.Contains(stderr, "in use by another provebench run") {
		t.Errorf("ab into a folder another ab holds: exit %d, %s", code, stderr)
	}
}

// Issue 42 case 10: --worker-reps 2^62 wrapped to --reuse-process 0 (a
// setup every repetition while ab.txt said "warm workers"), 2^63-1 to
// --reuse-process -4. A count past MaxWorkerReps is bad input.
func TestABWorkerRepsBounded(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	for _, n := range []string{"4611686018427387904", "9223372036854775807", "1048577"} {
		out := filepath.Join(dir, "never")
		if code, _, stderr := capture(t, "ab", scen, "--worker-reps", n, "-o", out); code != exitUsage || !strings.Contains(stderr, "--worker-reps") {
			t.Errorf("--worker-reps %s: exit %d, %s", n, code, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("--worker-reps %s left an output folder", n)
		}
	}
}
