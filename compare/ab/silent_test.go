//go:build linux

package ab

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

// livePIDsWith lists the live processes whose command line holds marker.
func livePIDsWith(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
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

// silentSide is a side binary that says it serves and then never
// answers: it sleeps (marker in its command line) on every request.
func silentSide(t *testing.T, marker string) string {
	exe := filepath.Join(t.TempDir(), "provebench")
	script := "#!/bin/sh\nif [ \"$2\" = --help ]; then echo '      --serve   serve'; exit 0; fi\nexec sleep " + marker + "\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// Issue 42 case 5: a warm side that stops answering (a server that never
// replies, or one stopped mid-pair) held ab for ever, deaf to SIGTERM.
// Each reply has a deadline (the configuration's timeout and an allowance
// for the worker's setup): past it the server is killed, the repetition
// recorded as crashed, and ab goes on; a cancelled context kills the
// server at once. Nothing of the server is left either way.
func TestASilentServerIsStopped(t *testing.T) {
	marker := "4242.4242"
	r := &Runner{
		Base: Side{Name: "base", Exe: silentSide(t, marker)}, New: Side{Name: "new", Exe: silentSide(t, marker)},
		OutDir: t.TempDir(), WorkerReps: 2, replyAllowance: 100 * time.Millisecond,
	}
	start := time.Now()
	base, cur, err := r.Run(context.Background(), []Config{{Name: "c", Pairs: 1, Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %s", took)
	}
	for _, doc := range []*results.Run{base, cur} {
		reps := doc.Scenarios[0].Repetitions
		if len(reps) != 1 || reps[0].Status != results.StatusCrashed || !strings.Contains(reps[0].Error, "no reply within 300ms") {
			t.Errorf("repetitions %+v, want one crashed with no reply", reps)
		}
	}
	if left := livePIDsWith(marker); len(left) > 0 {
		t.Errorf("servers left running: %v", left)
	}

	ctx, cancel := context.WithCancel(context.Background())
	r.replyAllowance = time.Hour
	r.OutDir = t.TempDir()
	go func() {
		for len(livePIDsWith(marker)) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	if _, _, err := r.Run(ctx, []Config{{Name: "c", Pairs: 1}}); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	if left := livePIDsWith(marker); len(left) > 0 {
		t.Errorf("servers left running after the cancel: %v", left)
	}
}

// A server stopped by a signal mid-pair (SIGSTOP) is seen stopped and
// killed within seconds, not waited for to its deadline.
func TestAStoppedServerIsKilled(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "provebench")
	script := "#!/bin/sh\nif [ \"$2\" = --help ]; then echo '      --serve   serve'; exit 0; fi\nexec sh -c 'kill -STOP $$; sleep 4343.4343' 4343.4343\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Runner{
		Base: Side{Name: "base", Exe: exe}, New: Side{Name: "new", Exe: exe},
		OutDir: t.TempDir(), WorkerReps: 2, replyAllowance: time.Hour,
	}
	base, _, err := r.Run(context.Background(), []Config{{Name: "c", Pairs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if reps := base.Scenarios[0].Repetitions; len(reps) != 1 || reps[0].Status != results.StatusCrashed || !strings.Contains(reps[0].Error, "was stopped") {
		t.Errorf("repetitions %+v, want one crashed: stopped", reps)
	}
	if left := livePIDsWith("4343.4343"); len(left) > 0 {
		t.Errorf("servers left: %v", left)
	}
}
