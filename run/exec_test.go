//go:build linux

package run

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/spec"
)

// execHelper is what the exec tests run as external commands: the test
// binary itself (`exec-helper WHAT ARGS`), so the tests need no other
// program.
func execHelper(args []string) {
	switch args[0] {
	case "alloc": // alloc MiB HOLD [BARRIER N]: touch MiB of memory, hold it, print TIMELINE lines
		mib, _ := strconv.Atoi(args[1])
		hold, _ := time.ParseDuration(args[2])
		fmt.Fprintf(os.Stderr, "TIMELINE,0,SYNTH_START,1,%d\n", mib)
		b := make([]byte, mib<<20)
		for i := 0; i < len(b); i += 4096 { // a byte per page makes it resident
			b[i] = 1
		}
		fmt.Fprintf(os.Stderr, "TIMELINE,5,SYNTH_END,1,%d\nTIMELINE,6,GPU_START,1,%d\n", mib, mib)
		if len(args) == 5 {
			// Hold only once all N allocators have started theirs, so that
			// they overlap however late a loaded machine starts one.
			n, _ := strconv.Atoi(args[4])
			_ = os.WriteFile(filepath.Join(args[3], strconv.Itoa(os.Getpid())), nil, 0o644)
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if entries, _ := os.ReadDir(args[3]); len(entries) >= n {
					break
				}
			}
		}
		time.Sleep(hold)
		fmt.Fprintf(os.Stderr, "TIMELINE,9,GPU_END,1,%d\n", mib)
		fmt.Println(b[0])
	case "hog": // grow until stopped
		var keep [][]byte
		for {
			b := make([]byte, 8<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
			time.Sleep(2 * time.Millisecond)
		}
	case "spawn-escapee": // start an escapee and exit without waiting for it
		cmd := exec.Command(os.Args[0], "exec-helper", "escapee", args[1])
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		for { // until the escapee has written its pid
			if _, err := os.Stat(args[1]); err == nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	case "spawn-escapee-and-wait": // start an escapee, then run on
		execHelper([]string{"spawn-escapee", args[1]})
		time.Sleep(time.Minute)
	case "escapee": // leave the session, ignore SIGTERM, outlive everyone
		_, _ = syscall.Setsid()
		signal.Ignore(syscall.SIGTERM)
		_ = os.WriteFile(args[1]+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o644)
		_ = os.Rename(args[1]+".tmp", args[1])
		time.Sleep(time.Minute)
	case "serve": // a daemon: JSON status and Prometheus pages on 127.0.0.1
		polls := 0
		mux := http.NewServeMux()
		mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
			polls++
			fmt.Fprintf(w, `{"memory":{"budget_bytes":%d},"polls":%d}`, 14<<30, polls)
		})
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "# TYPE cuzk_inflight gauge\ncuzk_inflight{gpu=\"0\"} 2\ncuzk_inflight{gpu=\"1\"} 3\n")
		})
		_ = http.ListenAndServe(args[1], mux)
	}
}

func execSpec(name string, e *ExecSpec) Spec {
	if e.StopGrace == 0 {
		e.StopGrace = 200 * time.Millisecond
	}
	return Spec{
		Name: name, Source: "exec_test.go", Exec: e, Repeats: 1,
		SampleInterval: 5 * time.Millisecond, Timeout: time.Minute,
	}
}

func runExec(t *testing.T, specs ...Spec) []results.Repetition {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Exe: exe, OutDir: t.TempDir(), CacheDir: cacheDir}
	doc, err := r.Run(context.Background(), specs)
	if err != nil {
		t.Fatal(err)
	}
	var reps []results.Repetition
	for _, sc := range doc.Scenarios {
		if sc.Driver != DriverExec {
			t.Errorf("%s: driver %q, want exec", sc.Name, sc.Driver)
		}
		reps = append(reps, sc.Repetitions...)
	}
	return reps
}

// Issue 20: the exec driver numbers repetitions as the built-in pipeline
// does (from 1, warm-ups apart), in results and in {{.Repetition}}.
func TestExecRepetitionIndexes(t *testing.T) {
	dir := t.TempDir()
	spec := execSpec("numbered", &ExecSpec{Command: []string{"sh", "-c", `echo "{{if .Warmup}}w{{end}}{{.Repetition}}" >> "$0"`, filepath.Join(dir, "seen")}})
	spec.Repeats, spec.Warmups = 2, 1
	reps := runExec(t, spec)
	if got := repIndexes(reps); got != "w1 1 2" {
		t.Errorf("results number the repetitions %q, want %q", got, "w1 1 2")
	}
	seen, err := os.ReadFile(filepath.Join(dir, "seen"))
	if err != nil || strings.Join(strings.Fields(string(seen)), " ") != "w1 1 2" {
		t.Errorf("{{.Repetition}} read %q (%v), want w1 1 2", seen, err)
	}
}

func TestExecProcessTree(t *testing.T) {
	exe, _ := os.Executable()
	script := `"$0" exec-helper alloc 48 1s "$1" 2 & "$0" exec-helper alloc 32 1s "$1" 2; wait`
	reps := runExec(t, execSpec("tree", &ExecSpec{Command: []string{"sh", "-c", script, exe, t.TempDir()}, Timeline: true, Proofs: 1}))
	rep := reps[0]
	if rep.Status != results.StatusOK {
		t.Fatalf("status %s: %s", rep.Status, rep.Error)
	}
	if rep.ExitCode == nil || *rep.ExitCode != 0 {
		t.Errorf("exit code %v, want 0", rep.ExitCode)
	}
	// Both allocators hold their memory at once: the tree's peak is at
	// least the sum, and each one's own peak is at least its share.
	if rep.PeakRSSBytes < 80<<20 {
		t.Errorf("tree peak %d MiB, want >= 80 (48 + 32 held at once)", rep.PeakRSSBytes>>20)
	}
	var big []int
	for _, p := range rep.Processes {
		if p.PeakRSSBytes >= 32<<20 && p.Name != "sh" {
			big = append(big, int(p.PeakRSSBytes>>20))
		}
	}
	if len(big) != 2 {
		t.Errorf("processes %+v: want two of >= 32 MiB besides the shell", rep.Processes)
	}
	if rep.PeakCounters["on_gpu"] != 2 || rep.Partitions != 2 || rep.FinalCounters["on_gpu"] != 0 {
		t.Errorf("counters peak %v final %v partitions %d", rep.PeakCounters, rep.FinalCounters, rep.Partitions)
	}
	// The events' span (their own offsets, 0 to 9 ms) is the wall time;
	// the processes lived for their hold.
	if rep.Stages["gpu"].Count != 2 || !(math.Abs(rep.WallSeconds-0.009) <= 1e-9) || rep.SecondsPerProof != rep.WallSeconds || rep.ProcessSeconds < 1 {
		t.Errorf("stages %v wall %.3f s/proof %.3f", rep.Stages, rep.WallSeconds, rep.SecondsPerProof)
	}
	if rep.Series == nil || len(rep.Series.Counters["on_gpu"]) != len(rep.Series.T) {
		t.Error("no counter series")
	}
}

func TestExecNothingOutlivesARepetition(t *testing.T) {
	exe, _ := os.Executable()
	pidFile := filepath.Join(t.TempDir(), "escapee.pid")
	reps := runExec(t,
		execSpec("escape", &ExecSpec{Command: []string{exe, "exec-helper", "spawn-escapee", pidFile}}))
	if reps[0].Status != results.StatusOK {
		t.Fatalf("status %s: %s", reps[0].Status, reps[0].Error)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(data))
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("pid %d (its own session, ignoring SIGTERM) outlived the repetition", pid)
	}
}

func TestExecStops(t *testing.T) {
	exe, _ := os.Executable()
	timeout := execSpec("timeout", &ExecSpec{Command: []string{"sleep", "60"}})
	timeout.Timeout = 300 * time.Millisecond
	hog := execSpec("hog", &ExecSpec{Command: []string{"sh", "-c", `"$0" exec-helper hog`, exe}})
	hog.MemoryLimit = 96 << 20
	failing := execSpec("exit", &ExecSpec{Command: []string{"sh", "-c", "echo first >&2; echo oops >&2; exit 3"}})
	reps := runExec(t, timeout, hog, failing)
	if reps[0].Status != results.StatusTimeout {
		t.Errorf("timeout: status %s (%s)", reps[0].Status, reps[0].Error)
	}
	if reps[1].Status != results.StatusMemoryLimit || reps[1].PeakRSSBytes < 96<<20 {
		t.Errorf("hog: status %s (%s), peak %d MiB", reps[1].Status, reps[1].Error, reps[1].PeakRSSBytes>>20)
	}
	r := reps[2]
	if r.Status != results.StatusFailed || r.ExitCode == nil || *r.ExitCode != 3 || r.StderrTail != "first\noops" || !strings.Contains(r.Error, "status 3") {
		t.Errorf("exit: status %s (%s), code %v, tail %q", r.Status, r.Error, r.ExitCode, r.StderrTail)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestExecDaemonAndEndpoints(t *testing.T) {
	exe, _ := os.Executable()
	addr := freeAddr(t)
	spec := execSpec("daemon", &ExecSpec{
		Command: []string{"sleep", "{{.Vars.hold}}"},
		Daemon:  &DaemonSpec{Command: []string{exe, "exec-helper", "serve", addr}, ReadyURL: "http://" + addr + "/status", ReadyTimeout: 20 * time.Second},
		Files:   []ExecFile{{Path: "conf/{{.Vars.hold}}.toml", Content: "hold = {{.Vars.hold}}\n"}},
		Status: &StatusSpec{URL: "http://" + addr + "/status", Interval: 20 * time.Millisecond,
			Counters: map[string]string{"/memory/budget_bytes": "budget_bytes", "/polls": "polls"}},
		Prometheus: &PrometheusSpec{URL: "http://" + addr + "/metrics", Interval: 20 * time.Millisecond,
			Counters: map[string]string{"cuzk_inflight": "inflight"}},
	})
	spec.Vars = map[string]string{"hold": "0.5"}
	reps := runExec(t, spec)
	r := reps[0]
	if r.Status != results.StatusOK {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	if r.PeakCounters["budget_bytes"] != 14<<30 || r.PeakCounters["inflight"] != 5 || r.PeakCounters["polls"] < 3 {
		t.Errorf("counters %v", r.PeakCounters)
	}
	if len(r.Processes) < 2 {
		t.Errorf("processes %+v: want the daemon's and the command's", r.Processes)
	}
	for _, p := range r.Processes {
		if alive(p.PID) {
			t.Errorf("%s (pid %d) outlived the repetition", p.Name, p.PID)
		}
	}
}

func TestExecTemplateError(t *testing.T) {
	s := execSpec("missing-var", &ExecSpec{Command: []string{"echo", "{{.Vars.nope}}"}})
	reps := runExec(t, s)
	if reps[0].Status != results.StatusFailed || !strings.Contains(reps[0].Error, "nope") {
		t.Errorf("status %s: %s", reps[0].Status, reps[0].Error)
	}
	if err := spec.CheckExecTemplates(&ExecSpec{Command: []string{"{{.Vars.x"}}); err == nil || !strings.Contains(err.Error(), "exec.command[0]") {
		t.Errorf("CheckExecTemplates: %v", err)
	}
}
