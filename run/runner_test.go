package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/exec"
	"github.com/provebench/provebench/run/supervise"
)

// The test binary doubles as the child: the runner starts `Exe child`, and
// TestMain serves that the way cmd/provebench does. PROVEBENCH_TEST_CHILD
// selects a misbehaving child for the fault tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "exec-helper" {
		execHelper(os.Args[2:])
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == "exec-shim" {
		if err := exec.ShimMain(context.Background(), os.Stdin, os.NewFile(3, "stream")); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(testExecParentEnv) != "" && len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-test.") {
		runTestExecParent() // the parent of TestExecNothingOutlivesAKilledRunner
	}
	if os.Getenv(testParentEnv) != "" && (len(os.Args) < 2 || os.Args[1] != "child") {
		runTestParent() // the parent of TestChildDiesWithItsParent
	}
	if len(os.Args) > 1 && os.Args[1] == "child" {
		switch os.Getenv("PROVEBENCH_TEST_CHILD") {
		case "crash":
			os.Exit(7)
		case "sleep":
			// Tell the test who we are, then outlive any repetition.
			if err := os.WriteFile(os.Getenv(testPIDFileEnv), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
				os.Exit(3)
			}
			time.Sleep(time.Hour)
			os.Exit(0)
		case "spike":
			// A burst of memory between two samples, freed before the
			// pipeline runs: only the kernel's peak remembers it.
			spike(256 << 20)
		case "hog":
			// Touch memory until the parent stops us.
			var keep [][]byte
			for {
				b := make([]byte, 16<<20)
				for i := range b {
					b[i] = 1
				}
				keep = append(keep, b)
				time.Sleep(5 * time.Millisecond)
			}
		}
		if err := ChildMain(context.Background(), os.Stdin, os.NewFile(childStreamFD, "stream")); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// cacheDir shares keys between the tests of one run.
var cacheDir = filepath.Join(os.TempDir(), "provebench-bench-test-keys")

func smallSpec(name string, strategy config.Strategy) Spec {
	return Spec{
		Name:   name,
		Source: "runner_test.go",
		Workload: config.Workload{
			Constraints: 1 << 8, Partitions: 3, Proofs: 2, Concurrency: 2, SynthesisRounds: 1, Seed: 1,
		},
		Pipeline: config.Config{
			Strategy: strategy, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1,
		},
		Backend: "cpu", Key: groth16.KindSetup, Verify: true,
		Repeats: 2, Warmups: 1, SampleInterval: 5 * time.Millisecond, Timeout: time.Minute,
	}
}

func newTestRunner(t *testing.T) *Runner {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{Exe: exe, OutDir: t.TempDir(), CacheDir: cacheDir, Env: results.Environment{OS: "test"}}
}

func TestRunRecordsEveryRepetition(t *testing.T) {
	r := newTestRunner(t)
	r.HeapProfiles = true
	doc, err := r.Run(context.Background(), []Spec{smallSpec("release", config.Release), smallSpec("hold", config.Hold)})
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Complete || len(doc.Scenarios) != 2 {
		t.Fatalf("complete %v, %d scenarios", doc.Complete, len(doc.Scenarios))
	}
	onDisk, err := results.Read(r.ResultsPath())
	if err != nil {
		t.Fatal(err)
	}
	if !onDisk.Complete || len(onDisk.Scenarios) != 2 {
		t.Fatal("results.json does not hold the finished run")
	}
	for _, sc := range doc.Scenarios {
		if len(sc.Repetitions) != 3 || !sc.Repetitions[0].Warmup || sc.Repetitions[1].Warmup {
			t.Fatalf("%s: want 1 warm-up then 2 repetitions, got %d", sc.Name, len(sc.Repetitions))
		}
		if got := repIndexes(sc.Repetitions); got != "w1 1 2" {
			t.Errorf("%s: repetitions numbered %q, want %q", sc.Name, got, "w1 1 2")
		}
		if sc.KeyKind != "setup" || !sc.Verifiable || len(sc.Spec) == 0 {
			t.Errorf("%s: key %s verifiable %v", sc.Name, sc.KeyKind, sc.Verifiable)
		}
		for _, rep := range sc.Repetitions {
			if rep.Status != results.StatusOK {
				t.Fatalf("%s rep %d: %s %s", sc.Name, rep.Index, rep.Status, rep.Error)
			}
			if rep.Partitions != 6 || rep.Proofs != 2 || rep.ProofsVerified != 2 || !(rep.PartitionsPerSecond > 0) {
				t.Errorf("%s: %d partitions, %d proofs, %d verified, %.2f/s", sc.Name, rep.Partitions, rep.Proofs, rep.ProofsVerified, rep.PartitionsPerSecond)
			}
			if len(rep.FinalCounters) == 0 {
				t.Errorf("%s rep %d: no final counters", sc.Name, rep.Index)
			}
			for name, v := range rep.FinalCounters {
				if v != 0 {
					t.Errorf("%s: counter %s ended at %d", sc.Name, name, v)
				}
			}
			// The child's own VmHWM, or a later sample of it by the parent:
			// never wait4's figure, which may be the parent's.
			if (rep.PeakRSSSource != results.PeakFromVmHWM && rep.PeakRSSSource != results.PeakFromSampledVmHWM) || rep.PeakRSSBytes == 0 {
				t.Errorf("%s: peak RSS %d from %q", sc.Name, rep.PeakRSSBytes, rep.PeakRSSSource)
			}
			if rep.PeakCounters["dataset_bytes"] <= 0 || rep.Stages["synthesis"].Count != 6 || rep.Stages["msm_h"].Count != 6 {
				t.Errorf("%s: peaks %v stages %v", sc.Name, rep.PeakCounters, rep.Stages)
			}
			s := rep.Series
			if s == nil || len(s.T) == 0 || len(s.RSSBytes) != len(s.T) || len(s.Counters["partitions_done"]) != len(s.T) {
				t.Fatalf("%s: series missing or ragged", sc.Name)
			}
			// The RSS account: the Go runtime's figures and the key's
			// residency on the series' time axis, within RSS.
			last := len(s.T) - 1
			for _, name := range []string{"go_heap_inuse_bytes", "go_runtime_bytes", "key_resident_bytes"} {
				if col := s.Counters[name]; len(col) != len(s.T) || col[last] <= 0 {
					t.Errorf("%s: series %s = %v", sc.Name, name, col)
				}
			}
			if gc := s.Counters["go_gc_cycles"]; len(gc) != len(s.T) || !slices.IsSorted(gc) { // a short run may not collect
				t.Errorf("%s: go_gc_cycles = %v", sc.Name, gc)
			}
			if key, rss := s.Counters["key_resident_bytes"][last], s.RSSBytes[last]; uint64(key) > rss {
				t.Errorf("%s: key resident %d > RSS %d", sc.Name, key, rss)
			}
			// A heap profile for each measured repetition, none for warm-ups.
			if rep.Warmup != (rep.HeapProfile == "") || (!rep.Warmup && rep.HeapProfileSeconds == nil) {
				t.Errorf("%s rep %d (warm-up %v): heap profile %q", sc.Name, rep.Index, rep.Warmup, rep.HeapProfile)
			} else if !rep.Warmup {
				if st, err := os.Stat(filepath.Join(r.OutDir, rep.HeapProfile)); err != nil || st.Size() == 0 {
					t.Errorf("%s: heap profile %s: %v", sc.Name, rep.HeapProfile, err)
				}
				// Named by the repetition's index, from 1 as the console counts.
				if want := fmt.Sprintf("-%d.pprof", rep.Index); !strings.HasSuffix(rep.HeapProfile, want) {
					t.Errorf("%s rep %d: heap profile %s, want a name ending %s", sc.Name, rep.Index, rep.HeapProfile, want)
				}
			}
			if rep.DeviceBusyFraction == nil || !(*rep.DeviceBusyFraction > 0 && *rep.DeviceBusyFraction <= 1.01) { // NaN fails too
				t.Errorf("%s: device busy %v", sc.Name, rep.DeviceBusyFraction)
			}
			if s.GPUMemoryBytes != nil || rep.PeakGPUMemoryBytes != nil {
				t.Errorf("%s: GPU figures without a GPU sampler", sc.Name)
			}
		}
	}
	// The pile-up shows in the exact counters: release lets every
	// partition wait; hold at most its permits.
	rel, hold := doc.Scenarios[0].Repetitions[1], doc.Scenarios[1].Repetitions[1]
	if hold.PeakCounters["waiting_send"] > 2 {
		t.Errorf("hold: %d waiting to send with 2 permits", hold.PeakCounters["waiting_send"])
	}
	t.Logf("peak waiting_send: release %d, hold %d", rel.PeakCounters["waiting_send"], hold.PeakCounters["waiting_send"])
}

func TestFaultsAreRecordedAndTheSweepGoesOn(t *testing.T) {
	cases := []struct {
		child  string
		mutate func(*Spec)
		want   results.Status
	}{
		{"crash", nil, results.StatusCrashed},
		{"hog", func(s *Spec) { s.MemoryLimit = 64 << 20 }, results.StatusMemoryLimit},
		{"hog", func(s *Spec) { s.Timeout = 300 * time.Millisecond }, results.StatusTimeout},
	}
	for _, tc := range cases {
		t.Run(string(tc.want), func(t *testing.T) {
			r := newTestRunner(t)
			bad := smallSpec("bad", config.Hold)
			bad.Warmups, bad.Repeats = 0, 1
			if tc.mutate != nil {
				tc.mutate(&bad)
			}
			good := smallSpec("good", config.Hold)
			good.Warmups, good.Repeats = 0, 1
			// Only the first scenario's child misbehaves: the variable is
			// cleared by the progress hook once it has started.
			t.Setenv("PROVEBENCH_TEST_CHILD", tc.child)
			r.Progress = &clearEnvOnEnd{name: "PROVEBENCH_TEST_CHILD"}
			doc, err := r.Run(context.Background(), []Spec{bad, good})
			if err != nil {
				t.Fatal(err)
			}
			got := doc.Scenarios[0].Repetitions[0]
			if got.Status != tc.want || got.Error == "" {
				t.Fatalf("bad scenario: %s (%q), want %s", got.Status, got.Error, tc.want)
			}
			if next := doc.Scenarios[1].Repetitions[0]; next.Status != results.StatusOK {
				t.Fatalf("the sweep did not go on: %s %s", next.Status, next.Error)
			}
		})
	}
}

// clearEnvOnEnd unsets an environment variable when the first repetition
// ends, so later children behave.
type clearEnvOnEnd struct {
	nopProgress
	name string
}

func (c *clearEnvOnEnd) RepetitionEnd(*Spec, *results.Repetition) { os.Unsetenv(c.name) }

func TestInterruptKeepsFinishedRepetitions(t *testing.T) {
	r := newTestRunner(t)
	spec := smallSpec("long", config.Hold)
	spec.Warmups, spec.Repeats = 0, 50
	ctx, cancel := context.WithCancel(context.Background())
	r.Progress = &cancelAfter{n: 2, cancel: cancel}
	doc, err := r.Run(ctx, []Spec{spec})
	if err == nil {
		t.Fatal("an interrupted run returned no error")
	}
	onDisk, rerr := results.Read(r.ResultsPath())
	if rerr != nil {
		t.Fatal(rerr)
	}
	reps := onDisk.Scenarios[0].Repetitions
	if onDisk.Complete || len(reps) < 2 || len(reps) >= 50 {
		t.Fatalf("complete %v with %d repetitions", onDisk.Complete, len(reps))
	}
	if reps[0].Status != results.StatusOK || reps[1].Status != results.StatusOK {
		t.Fatalf("finished repetitions lost: %s, %s", reps[0].Status, reps[1].Status)
	}
	if last := reps[len(reps)-1]; last.Status != results.StatusCancelled && last.Status != results.StatusOK {
		t.Fatalf("the interrupted repetition is %s", last.Status)
	}
	_ = doc
}

type cancelAfter struct {
	nopProgress
	n      int
	cancel func()
}

func (c *cancelAfter) RepetitionEnd(*Spec, *results.Repetition) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
}

func TestStreamTimeAxis(t *testing.T) {
	s := &streamReader{}
	base := time.Now()
	s.handle(base.Add(30*time.Millisecond), childMsg{Kind: msgReady, Names: []string{"partitions_done"}})
	s.handle(base.Add(45*time.Millisecond), childMsg{Kind: msgSample, T: 0.040, Values: []int64{3}})
	t0, ok := s.readyAt()
	if !ok || t0.Sub(base) != 5*time.Millisecond {
		t.Fatalf("t0 = base%+v, want base+5ms (the earliest receipt minus child time)", t0.Sub(base))
	}
	if v, ok := s.counter("partitions_done"); !ok || v != 3 {
		t.Fatalf("counter = %d, %v", v, ok)
	}
	s.handle(base, childMsg{Kind: msgSample, Values: []int64{1, 2}}) // wrong width: ignored
	if v, _ := s.counter("partitions_done"); v != 3 {
		t.Fatal("a malformed sample replaced the values")
	}
}

func TestSteadyBusyFraction(t *testing.T) {
	names := []string{"partitions_done", seriesDeviceBusy, seriesDeviceSpan}
	r := supervise.NewRecorder(10*time.Millisecond, false)
	// 10 partitions; the device is busy 80% of the time throughout, and
	// its busy time and span lag the host's clock (credited late).
	for i := 0; i <= 100; i++ {
		ts := float64(i) / 100
		dev := max(0, ts-0.05)
		r.Add(time.Now(), 1, nil, []int64{int64(i / 10), int64(800_000 * dev), int64(1_000_000 * dev)}, ts)
	}
	got, ok := steadyBusyFraction(r.Rows(), names, 10)
	if !ok || !(got >= 0.79 && got <= 0.81) { // NaN fails too
		t.Fatalf("steady busy = %.3f, want 0.8", got)
	}
	if _, ok := steadyBusyFraction(r.Rows(), names, 3); ok {
		t.Fatal("too few partitions should give 0 (unknown)")
	}
	if _, ok := steadyBusyFraction(r.Rows(), names[:2], 10); ok {
		t.Fatal("without a span series the fraction is unknown")
	}
}

func TestProgressLines(t *testing.T) {
	var b strings.Builder
	p := NewProgress(&b, false)
	spec := smallSpec("x", config.Hold)
	p.Begin(1, 1)
	p.RepetitionStart(&spec, 0, false)
	p.Tick(&spec, time.Second, 1, 1<<20) // not a terminal: no redraw
	p.RepetitionEnd(&spec, &results.Repetition{Status: results.StatusMemoryLimit, Error: "RSS passed"})
	out := b.String()
	if !strings.Contains(out, "[1/1] x rep 1/2  memory-limit: RSS passed") || strings.Contains(out, "\r") {
		t.Fatalf("progress output:\n%s", out)
	}
}

// The estimate of the time left comes from finished repetitions: this
// configuration's own mean for its remaining ones, the overall mean for
// the configurations after it.
func TestProgressTimeLeft(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	p := NewProgress(&b, false).(*lineProgress)
	p.now = func() time.Time { return clock }
	a, c := smallSpec("a", config.Hold), smallSpec("c", config.Hold)
	a.Warmups, a.Repeats, c.Warmups, c.Repeats = 1, 2, 0, 2
	p.Begin(2, 5)
	step := func(spec *Spec, idx int, warm bool, d time.Duration) {
		p.RepetitionStart(spec, idx, warm)
		clock = clock.Add(d)
		p.RepetitionEnd(spec, &results.Repetition{Index: idx, Warmup: warm, Status: results.StatusOK})
	}
	step(&a, 0, true, 10*time.Second)  // 2 more of a, 2 of c at 10 s
	step(&a, 0, false, 20*time.Second) // a: 15 s mean, 1 left; c: 2 at 15 s
	step(&a, 1, false, 30*time.Second) // c: 2 at 20 s
	step(&c, 0, false, 4*time.Second)  // c's own mean: 4 s, 1 left
	step(&c, 1, false, 4*time.Second)  // done: no estimate
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{"(~40s left)", "(~45s left)", "(~40s left)", "(~4s left)", ""}
	for i, w := range want {
		l := lines[i+1]
		if (w == "" && strings.Contains(l, "left")) || !strings.Contains(l, w) {
			t.Errorf("line %d: %q, want %q", i+1, l, w)
		}
	}
}

// On a terminal the estimate counts down while a repetition runs, and does
// not fall below what the repetitions after it need when it runs long.
func TestProgressCountsDown(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	p := NewProgress(&b, true).(*lineProgress)
	p.now = func() time.Time { return clock }
	a := smallSpec("a", config.Hold)
	a.Warmups, a.Repeats = 0, 3
	p.Begin(1, 3)
	p.RepetitionStart(&a, 0, false)
	clock = clock.Add(10 * time.Second)
	p.RepetitionEnd(&a, &results.Repetition{Index: 0, Status: results.StatusOK})
	p.RepetitionStart(&a, 1, false) // 2 left at 10 s: 20 s
	clock = clock.Add(4 * time.Second)
	p.Tick(&a, 4*time.Second, 1, 1<<20)
	clock = clock.Add(21 * time.Second) // long past its estimate
	p.Tick(&a, 25*time.Second, 2, 1<<20)
	out := b.String()
	if !strings.Contains(out, "~16s left") || !strings.Contains(out, "~10s left") {
		t.Fatalf("countdown:\n%q", out)
	}
}

// repIndexes writes repetitions' indexes as "w1 1 2" (w for a warm-up), the
// numbering every driver must give them.
func repIndexes(reps []results.Repetition) string {
	var parts []string
	for _, r := range reps {
		w := ""
		if r.Warmup {
			w = "w"
		}
		parts = append(parts, fmt.Sprintf("%s%d", w, r.Index))
	}
	return strings.Join(parts, " ")
}
