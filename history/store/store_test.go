package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func run(i int) Run {
	return Run{
		Commit: fmt.Sprintf("%040x", i), Time: time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, i),
		Host: "ci-1", CPUModel: "cpu", ToolVersion: "test", Source: fmt.Sprintf("night-%d.json.gz", i),
	}
}

// samples is a run's rows: configurations × metrics × repetitions.
func samples(i, configs, reps int) []Sample {
	var out []Sample
	for c := range configs {
		for _, m := range []string{"peak_rss_bytes", "seconds_per_proof"} {
			for r := 1; r <= reps; r++ {
				out = append(out, Sample{Backend: "cpu", Configuration: fmt.Sprintf("c%d", c), Metric: m, Repetition: r, Value: float64(i*1000 + c*10 + r)})
			}
		}
	}
	return out
}

func entry(i, configs, reps int) []Entry {
	return []Entry{{Run: run(i), Samples: samples(i, configs, reps)}}
}

func openT(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAddAndRows(t *testing.T) {
	ctx := context.Background()
	s := openT(t, filepath.Join(t.TempDir(), "sub", "h.db"))
	for i := 3; i >= 1; i-- { // added out of order: rows come in time order
		if added, err := s.Add(ctx, entry(i, 2, 3)); err != nil || added != (Added{Runs: 1, Samples: 12}) {
			t.Fatalf("add %d: %+v, %v", i, added, err)
		}
	}
	if added, err := s.Add(ctx, entry(2, 2, 3)); err != nil || added != (Added{Known: 12}) {
		t.Fatalf("the same run again: added %+v, %v; want nothing added, 12 known", added, err)
	}
	rows, err := s.Rows(ctx, Filter{Metric: "peak_rss_bytes", Configuration: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("%d rows, want 3 runs × 3 repetitions", len(rows))
	}
	for k, r := range rows {
		night, rep := k/3+1, k%3+1
		if r.Commit != run(night).Commit || r.Repetition != rep || r.Value != float64(night*1000+10+rep) || !r.Time.Equal(run(night).Time) || r.Source != run(night).Source {
			t.Errorf("row %d: %+v, want night %d repetition %d", k, r, night, rep)
		}
	}
	if _, err := s.Add(ctx, []Entry{{Run: Run{Time: time.Now()}, Samples: samples(1, 1, 1)}}); err != ErrNoCommit {
		t.Errorf("a run without commit: %v", err)
	}
	if _, err := s.Add(ctx, []Entry{{Run: Run{Commit: "c"}, Samples: samples(1, 1, 1)}}); err != ErrNoTime {
		t.Errorf("a run without a start: %v", err)
	}
	if _, err := s.Add(ctx, []Entry{{Run: run(9), Samples: nil}}); err == nil {
		t.Error("a run without samples was added")
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentAdds: writers on their own connections add at once; every
// run arrives whole.
func TestConcurrentAdds(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	openT(t, path) // create the file first: the writers race only on adds
	const writers, each = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			s, err := Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for k := range each {
				i := w*each + k
				if _, err := s.Add(ctx, entry(i, 4, 5)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := openT(t, path)
	if n, err := s.Runs(ctx); err != nil || n != writers*each {
		t.Fatalf("%d runs (%v), want %d", n, err, writers*each)
	}
	rows, err := s.Rows(ctx, Filter{})
	if err != nil || len(rows) != writers*each*4*2*5 {
		t.Fatalf("%d rows (%v), want %d", len(rows), err, writers*each*4*2*5)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// The killed add: a child process (this test binary, re-run with
// killEnv set) writes every row of a large run inside its transaction,
// says so, and waits; the parent kills it with SIGKILL there. The file
// must then read as before the add: intact, the run absent, and a new add
// of the same run must succeed.
const killEnv = "PROVEBENCH_STORE_KILL_CHILD"

func TestKilledAddIsAllOrNothing(t *testing.T) {
	if path := os.Getenv(killEnv); path != "" {
		killChild(path)
		return
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	s := openT(t, path)
	if _, err := s.Add(ctx, entry(1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledAddIsAllOrNothing$")
	cmd.Env = append(os.Environ(), killEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "written\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child said %q (%v), want written", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// A reader cannot roll the interrupted add back: it says so, or reads
	// the history as before the add.
	if r, err := OpenReadOnly(ctx, path); err != nil {
		t.Logf("a reader before the rollback: %v", err)
		if !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("a reader before the rollback: %v", err)
		}
	} else {
		n, err := r.Runs(ctx)
		t.Logf("a reader before the rollback: %d runs, %v", n, err)
		if err != nil && !strings.Contains(err.Error(), "interrupted") || err == nil && n != 1 {
			t.Errorf("a reader before the rollback: %d runs, %v", n, err)
		}
		r.Close()
	}
	after := openT(t, path)
	if err := after.Check(ctx); err != nil {
		t.Fatalf("after the kill: %v", err)
	}
	if n, err := after.Runs(ctx); err != nil || n != 1 {
		t.Fatalf("after the kill: %d runs (%v), want the one added before", n, err)
	}
	rows, err := after.Rows(ctx, Filter{})
	if err != nil || len(rows) != len(samples(1, 2, 3)) {
		t.Fatalf("after the kill: %d rows (%v), want %d", len(rows), err, len(samples(1, 2, 3)))
	}
	if added, err := after.Add(ctx, entry(2, 50, 20)); err != nil || added.Runs != 1 {
		t.Fatalf("the killed run cannot be added again: %+v, %v", added, err)
	}
	if err := after.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// killChild adds run 2 with its commit held back until it is killed.
func killChild(path string) {
	s, err := Open(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_, err = s.add(context.Background(), entry(2, 50, 20), func() {
		fmt.Println("written")
		time.Sleep(time.Minute)
	})
	fmt.Fprintln(os.Stderr, "the child was not killed:", err, strconv.Quote(path))
	os.Exit(1)
}
