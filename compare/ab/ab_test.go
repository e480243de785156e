package ab

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provebench/provebench/compare"
	"github.com/provebench/provebench/results"
)

func TestOrderIsABBA(t *testing.T) {
	a, b := &side{Side: Side{Name: "base"}}, &side{Side: Side{Name: "new"}}
	var got []string
	for i := 1; i <= 4; i++ {
		for _, s := range order([2]*side{a, b}, i) {
			got = append(got, s.Name)
		}
	}
	if want := "base new new base base new new base"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

func TestARunWithoutResultsIsACrash(t *testing.T) {
	rep, run := readRepetition(filepath.Join(t.TempDir(), "results.json"), errors.New("signal: killed"), []byte("fatal error: out of memory\n"))
	if run != nil || rep.Status != results.StatusCrashed {
		t.Fatalf("status %s, run %v; want crashed, no run", rep.Status, run)
	}
	for _, want := range []string{"signal: killed", "out of memory"} {
		if !strings.Contains(rep.Error, want) {
			t.Errorf("error %q lacks %q", rep.Error, want)
		}
	}
}

func TestAddKeepsTheFirstRecord(t *testing.T) {
	s := &side{doc: &results.Run{}}
	s.add("hold", nil, results.Repetition{Index: 1, Warmup: true, Status: results.StatusCrashed})
	run := &results.Run{ToolVersion: "v1", Environment: results.Environment{CPUs: 2},
		Scenarios: []results.Scenario{{Name: "hold", Strategy: "hold", Spec: []byte(`{}`)}}}
	s.add("hold", run, results.Repetition{Index: 1, Status: results.StatusOK, Verifiable: true})
	if len(s.doc.Scenarios) != 1 {
		t.Fatalf("%d scenarios", len(s.doc.Scenarios))
	}
	sc := s.doc.Scenarios[0]
	if sc.Strategy != "hold" || len(sc.Repetitions) != 2 || !sc.Verifiable || s.doc.ToolVersion != "v1" || s.doc.Environment.CPUs != 2 {
		t.Errorf("record %+v, doc version %q", sc, s.doc.ToolVersion)
	}
}

// fakeSides is a test double of the sides' binaries: each repetition's
// seconds per proof comes from the side's function of the pair index,
// and the order of the calls is kept.
type fakeSides struct {
	calls []string
	spp   map[string]func(i int) float64
	next  map[string]int
}

func (f *fakeSides) runOne(_ context.Context, s *side, config string, _ int, _ bool) (results.Repetition, *results.Run, error) {
	f.next[s.Name]++
	i := f.next[s.Name]
	f.calls = append(f.calls, s.Name)
	v := f.spp[s.Name](i)
	run := &results.Run{Environment: results.Environment{CPUs: 2, CPUModel: "x"},
		Scenarios: []results.Scenario{{Name: config, Backend: "cpu", Spec: []byte(`{}`)}}}
	return results.Repetition{Status: results.StatusOK, SecondsPerProof: v, PartitionsPerSecond: 1 / v,
		CPUUserSeconds: 1, PeakRSSBytes: 1 << 20, Proofs: 1, Partitions: 1}, run, nil
}

func newFake(t *testing.T, base, cur func(i int) float64) (*Runner, *fakeSides) {
	f := &fakeSides{spp: map[string]func(int) float64{"base": base, "new": cur}, next: map[string]int{}}
	r := &Runner{Base: Side{Name: "base"}, New: Side{Name: "new"}, OutDir: t.TempDir(), runOne: f.runOne}
	return r, f
}

func TestRunUntilAddsPairsTheJudgeAsksFor(t *testing.T) {
	r, f := newFake(t, func(int) float64 { return 1 }, func(int) float64 { return 1 })
	rounds := 0
	judge := func(base, cur *results.Run) (map[string]Want, error) {
		rounds++
		if rounds <= 2 {
			return map[string]Want{"c": {Pairs: 3}}, nil // pairs come a whole ABBA round at a time
		}
		return nil, nil
	}
	base, cur, err := r.RunUntil(context.Background(), []Config{{Name: "c", Pairs: 6}}, time.Now().Add(time.Hour), judge)
	if err != nil {
		t.Fatal(err)
	}
	if rounds != 3 {
		t.Errorf("judged %d times, want 3 (after the first pairs and after each round of 2 more)", rounds)
	}
	b, n := base.Scenarios[0].Repetitions, cur.Scenarios[0].Repetitions
	if len(b) != 10 || len(n) != 10 || b[9].Index != 10 || n[9].Index != 10 || !base.Complete {
		t.Fatalf("repetitions %d/%d, last index %d; want pairs 1..10", len(b), len(n), b[len(b)-1].Index)
	}
	// ABBA goes on from pair 7: base first in odd pairs.
	if got := strings.Join(f.calls[12:], " "); got != "base new new base base new new base" {
		t.Errorf("extra pairs ran in order %s", got)
	}
}

func TestRunUntilStopsAtTheDeadline(t *testing.T) {
	r, f := newFake(t, func(int) float64 { return 1 }, func(int) float64 { return 1 })
	judged := 0
	judge := func(base, cur *results.Run) (map[string]Want, error) {
		judged++
		return map[string]Want{"c": {Pairs: 100}}, nil
	}
	// A deadline already past: the initial pairs run, nothing is added.
	if _, _, err := r.RunUntil(context.Background(), []Config{{Name: "c", Pairs: 6}}, time.Now().Add(-time.Second), judge); err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != 12 || judged != 0 {
		t.Errorf("%d repetitions, judged %d times; want the 6 pairs alone", len(f.calls), judged)
	}
}

func TestRunUntilResolvesAnInconclusiveGate(t *testing.T) {
	// The new side is 15% slower with ±8% noise per repetition: 6 pairs
	// leave the interval holding the 5% threshold; the judge, compare's
	// own estimate of the pairs needed, asks for more until it does not.
	noise := func(seed uint64) func(int) float64 {
		rng := rand.New(rand.NewPCG(seed, 9))
		return func(int) float64 { return 1 + 0.08*rng.NormFloat64() }
	}
	bn, nn := noise(1), noise(2)
	r, _ := newFake(t, bn, func(i int) float64 { return 1.15 * nn(i) })
	opts := compare.Options{Paired: true, Thresholds: compare.Thresholds{results.SecondsPerProof: 0.05}}
	first := true
	judge := func(base, cur *results.Run) (map[string]Want, error) {
		rep, err := compare.Compare(base, cur, opts)
		if err != nil {
			return nil, err
		}
		more := rep.MorePairs()
		if first && more["c"] == 0 {
			t.Errorf("6 noisy pairs resolved at once: outcome %v; the test needs an inconclusive start", rep.Outcome())
		}
		first = false
		wants := map[string]Want{}
		for name, n := range more {
			wants[name] = Want{Pairs: n}
		}
		return wants, nil
	}
	base, cur, err := r.RunUntil(context.Background(), []Config{{Name: "c", Pairs: 6}}, time.Now().Add(time.Minute), judge)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := compare.Compare(base, cur, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome() != compare.Regressed {
		m := rep.Scenario("c").Metric(results.SecondsPerProof)
		t.Errorf("after %d pairs: outcome %v, %s [%+.3f, %+.3f]; want the regression resolved", m.New.N, rep.Outcome(), m.Verdict, m.Lo, m.Hi)
	}
}

// TestResolveServesTheNearestConfigurationFirst: with a budget for one
// round only, the configuration nearest to a verdict (fewest pairs wanted)
// gets it, whatever the order they were given in.
func TestResolveServesTheNearestConfigurationFirst(t *testing.T) {
	r, f := newFake(t, func(int) float64 { return 1 }, func(int) float64 { return 1 })
	judged := 0
	judge := func(base, cur *results.Run) (map[string]Want, error) {
		judged++
		if judged > 1 {
			return nil, nil
		}
		return map[string]Want{"far": {Pairs: 40}, "near": {Pairs: 4}}, nil
	}
	base, _, err := r.RunUntil(context.Background(), []Config{{Name: "far", Pairs: 6}, {Name: "near", Pairs: 6}}, time.Now().Add(time.Hour), judge)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != 2*(6+6+2) {
		t.Fatalf("%d repetitions, want the 24 first and one round of 2 pairs", len(f.calls))
	}
	for _, sc := range base.Scenarios {
		want := 6
		if sc.Name == "near" {
			want = 8
		}
		if len(sc.Repetitions) != want {
			t.Errorf("%s: %d pairs, want %d", sc.Name, len(sc.Repetitions), want)
		}
	}
}

// TestASettledConfigurationGetsAsManyPairsAgain: a judge that keeps
// wanting pairs of a configuration whose regression is established gets
// as many pairs again as it had when the verdict came in, and no more,
// however large the budget.
func TestASettledConfigurationGetsAsManyPairsAgain(t *testing.T) {
	r, f := newFake(t, func(int) float64 { return 1 }, func(int) float64 { return 1.2 })
	judged := 0
	judge := func(base, cur *results.Run) (map[string]Want, error) {
		judged++
		return map[string]Want{"c": {Pairs: 40, Settled: true}}, nil
	}
	base, _, err := r.RunUntil(context.Background(), []Config{{Name: "c", Pairs: 6}}, time.Now().Add(time.Hour), judge)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(base.Scenarios[0].Repetitions); got != 12 || len(f.calls) != 24 {
		t.Errorf("%d pairs (%d repetitions), want 12: the 6 it settled at and 6 more", got, len(f.calls))
	}
	if judged != 4 {
		t.Errorf("judged %d times, want 4 (after pairs 6, 8, 10 and 12)", judged)
	}
}

// TestAWorkerRetiresOnceItsSetupIsPaid: a warm worker is replaced after
// WorkerReps repetitions when its windows have paid for its setup (8
// times over), serves on while they have not, and never past maxStretch
// times WorkerReps.
func TestAWorkerRetiresOnceItsSetupIsPaid(t *testing.T) {
	serve := func(setup, window float64, n int) *server {
		sv := &server{}
		for i := 0; i < n; i++ {
			rep := results.Repetition{WallSeconds: window}
			if i == 0 {
				rep.SetupSeconds = &setup
			}
			sv.account(&rep)
		}
		return sv
	}
	for _, tc := range []struct {
		name          string
		setup, window float64
		served        int
		want          bool
	}{
		{"short setup, WorkerReps served", 0.5, 1, 8, true},
		{"short setup, fewer served", 0.5, 1, 7, false},
		{"GPU-bound: 3 s setup, 1 s windows, 8 served", 3, 1, 8, false},
		{"GPU-bound: windows short of 8x the setup", 3, 1, 23, false},
		{"GPU-bound: windows reach 8x the setup", 3, 1, 24, true},
		{"synthesis-bound: 7 s setup, 3 s windows, 18 served", 7, 3, 18, false},
		{"synthesis-bound: 19 served", 7, 3, 19, true},
		{"a setup no window pays: below the cap", 100, 1, 31, false},
		{"a setup no window pays: at the cap", 100, 1, 32, true},
	} {
		sv := serve(tc.setup, tc.window, tc.served)
		if sv.served != tc.served || sv.setup != tc.setup {
			t.Fatalf("%s: accounted %d repetitions, %.1f s of setup", tc.name, sv.served, sv.setup)
		}
		if got := sv.retired(8); got != tc.want {
			t.Errorf("%s: retired(8) = %v after %d repetitions (%.0f s of windows, %.0f s of setup), want %v",
				tc.name, got, tc.served, sv.windows, sv.setup, tc.want)
		}
	}
}

// TestWarmSidesWarmUpTogether: with both sides warm, the first warm-up of
// each runs at the same time (their servers' setups overlap); later
// warm-ups alternate as pairs do. Each side's first warm-up waits until
// the other's has begun, which only a concurrent start lets happen.
func TestWarmSidesWarmUpTogether(t *testing.T) {
	began := map[string]chan struct{}{"base": make(chan struct{}), "new": make(chan struct{})}
	other := map[string]string{"base": "new", "new": "base"}
	var mu sync.Mutex
	var calls []string
	runOne := func(ctx context.Context, s *side, config string, index int, warm bool) (results.Repetition, *results.Run, error) {
		mu.Lock()
		calls = append(calls, fmt.Sprintf("%s/%d", s.Name, index))
		mu.Unlock()
		if index == 1 {
			close(began[s.Name])
			select {
			case <-began[other[s.Name]]:
			case <-time.After(10 * time.Second):
				return results.Repetition{}, nil, fmt.Errorf("%s's first warm-up: the other side's never began", s.Name)
			}
		}
		return results.Repetition{Status: results.StatusOK, SecondsPerProof: 1}, nil, nil
	}
	r := &Runner{Base: Side{Name: "base"}, New: Side{Name: "new"}, OutDir: t.TempDir(), runOne: runOne}
	sides := [2]*side{{Side: r.Base, serve: true, doc: &results.Run{}}, {Side: r.New, serve: true, doc: &results.Run{}}}
	for _, s := range sides {
		s.dir = filepath.Join(r.OutDir, s.Name)
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.warmups(context.Background(), sides, Config{Name: "c", Warmups: 2}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 4 || calls[2] != "new/2" || calls[3] != "base/2" {
		t.Errorf("warm-ups ran as %v, want both first ones, then new/2 and base/2 (ABBA)", calls)
	}
	for _, s := range sides {
		if reps := s.doc.Scenarios[0].Repetitions; len(reps) != 2 || !reps[0].Warmup {
			t.Errorf("%s recorded %+v, want two warm-ups", s.Name, reps)
		}
	}
}

// TestABlockedConfigurationGetsNoPairs: a configuration whose verdict
// only a quieter host could change (issue 39: release got ~145 pairs, 0
// of them quiet) gets none, and the log says so once, while the other
// configuration, which pairs can resolve, gets them.
func TestABlockedConfigurationGetsNoPairs(t *testing.T) {
	r, f := newFake(t, func(int) float64 { return 1 }, func(int) float64 { return 1 })
	var log strings.Builder
	r.Log = &log
	judged := 0
	judge := func(base, cur *results.Run) (map[string]Want, error) {
		judged++
		wants := map[string]Want{"busy": {Blocked: "seconds_per_proof: host busy"}}
		if judged <= 2 {
			wants["cpu"] = Want{Pairs: 4}
		}
		return wants, nil
	}
	base, _, err := r.RunUntil(context.Background(), []Config{{Name: "busy", Pairs: 6}, {Name: "cpu", Pairs: 6}}, time.Now().Add(time.Hour), judge)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != 2*(6+6+4) {
		t.Fatalf("%d repetitions, want the 24 first and two rounds of 2 pairs of cpu", len(f.calls))
	}
	if got := len(base.Scenarios[0].Repetitions); got != 6 {
		t.Errorf("busy: %d pairs, want its 6", got)
	}
	if n := strings.Count(log.String(), "busy: not judged after 6 pairs, and more pairs cannot change that while the host stays busy: seconds_per_proof: host busy"); n != 1 {
		t.Errorf("the log says it %d times, want once:\n%s", n, log.String())
	}
}
