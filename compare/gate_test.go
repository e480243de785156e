package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// pairedSides builds the two sides of an ab run on synthetic pairs: each
// pair shares a load factor (what interleaving buys), wall time and the
// CPU backend's device time move with it, a GPU's device time and CPU time
// do not. wallShift and deviceShift scale the new side's figures.
type pairedSides struct {
	pairs       int
	backend     string
	load1       float64 // load average per repetition, on 2 CPUs
	wallNoise   float64 // relative noise of wall time per repetition
	wallShift   float64
	deviceShift float64
}

func (p pairedSides) runs(seed uint64) (base, cur *results.Run) {
	rng := rand.New(rand.NewPCG(seed, 25))
	mk := func() *results.Run {
		return &results.Run{Environment: results.Environment{CPUs: 2, CPUModel: "x"}, Complete: true,
			Scenarios: []results.Scenario{{Name: "s", Backend: p.backend}}}
	}
	base, cur = mk(), mk()
	for i := 1; i <= p.pairs; i++ {
		load := 1 + rng.Float64() // the pair's shared share of the CPUs
		for side, run := range []*results.Run{base, cur} {
			wall, dev := 1.0, 0.1
			if side == 1 {
				wall, dev = p.wallShift, 0.1*p.deviceShift
			}
			wall *= load * (1 + p.wallNoise*rng.NormFloat64())
			dev *= 1 + 0.005*rng.NormFloat64()
			if p.backend == "cpu" {
				dev *= load
			}
			run.Scenarios[0].Repetitions = append(run.Scenarios[0].Repetitions, results.Repetition{
				Index: i, Status: results.StatusOK, Partitions: 6, Proofs: 1,
				SecondsPerProof: wall, PartitionsPerSecond: 6 / wall, DeviceSecondsPerPartition: &dev,
				CPUUserSeconds: 1 + 0.005*rng.NormFloat64(), PeakRSSBytes: 100 << 20,
				HostLoad: &results.HostLoad{Load1: p.load1},
			})
		}
	}
	return base, cur
}

func (p pairedSides) judge(t *testing.T, seed uint64) *Report {
	t.Helper()
	base, cur := p.runs(seed)
	return judgePaired(t, base, cur)
}

func judgePaired(t *testing.T, base, cur *results.Run) *Report {
	t.Helper()
	rep, err := Compare(base, cur, Options{Paired: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestGateDeviceTimeShiftIsARegressionThatNamesIt(t *testing.T) {
	// A GPU's clock: +25% device time is caught even on an oversubscribed
	// host, where wall time cannot be judged.
	for _, load := range []float64{1, 11} {
		p := pairedSides{pairs: 10, backend: "cuda", load1: load, wallNoise: 0.02, wallShift: 1, deviceShift: 1.25}
		rep := p.judge(t, 1)
		m := rep.Scenario("s").Metric(results.DeviceSecondsPerPartition)
		if rep.Outcome() != Regressed || m.Verdict != Regression {
			t.Fatalf("load %g: outcome %v, device time %s %+.3f [%+.3f, %+.3f]; want a regression", load, rep.Outcome(), m.Verdict, m.Change, m.Lo, m.Hi)
		}
		var txt strings.Builder
		if err := rep.WriteText(&txt); err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(txt.String(), "\n")
		if !strings.HasPrefix(head, "provebench ab: REGRESSION") || !strings.Contains(head, results.DeviceSecondsPerPartition) {
			t.Errorf("load %g: headline %q does not name %s", load, head, results.DeviceSecondsPerPartition)
		}
	}
}

func TestGateIdenticalSamplesPass(t *testing.T) {
	p := pairedSides{pairs: 10, backend: "cpu", load1: 1, wallShift: 1, deviceShift: 1}
	base, _ := p.runs(2)
	rep := judgePaired(t, base, base)
	if rep.Outcome() != Pass {
		t.Errorf("identical samples: outcome %v, want Pass; unjudged %v", rep.Outcome(), rep.Unjudged())
	}
}

func TestGateWallOnlyRegressionOnAnOversubscribedHostIsInconclusive(t *testing.T) {
	// Same CPU work and device time, +20% wall time, noisy: on a host with
	// a load of 11 on 2 CPUs nothing may call that a pass.
	for seed := range uint64(20) {
		p := pairedSides{pairs: 16, backend: "cpu", load1: 11, wallNoise: 0.3, wallShift: 1.2, deviceShift: 1}
		rep := p.judge(t, seed)
		if o := rep.Outcome(); o != NotJudged && o != Regressed {
			t.Fatalf("seed %d: outcome %v, want inconclusive (or a regression)", seed, o)
		}
		if rep.Outcome() == NotJudged {
			var txt strings.Builder
			if err := rep.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			head, _, _ := strings.Cut(txt.String(), "\n")
			for _, want := range []string{"INCONCLUSIVE", results.SecondsPerProof, "host oversubscribed"} {
				if !strings.Contains(head, want) {
					t.Errorf("seed %d: headline %q lacks %q", seed, head, want)
				}
			}
		}
	}
}

func TestGateIdenticalSidesNeverRegress(t *testing.T) {
	// Under a CPU hog (load 11 on 2 CPUs) wall time is very noisy and not
	// judged; on a quiet host it is as noisy as a quiet host makes it. (A
	// quiet host with noise that wide would false-alarm at the interval's
	// 2.5% tail: that is the 95% level, not the rule.)
	for _, host := range []struct{ load, noise float64 }{{1, 0.02}, {11, 0.3}} {
		for _, backend := range []string{"cpu", "cuda"} {
			for seed := range uint64(50) {
				load := host.load
				p := pairedSides{pairs: 10, backend: backend, load1: load, wallNoise: host.noise, wallShift: 1, deviceShift: 1}
				if rep := p.judge(t, 100+seed); rep.Regressed() {
					t.Errorf("%s, load %g, seed %d: identical sides regressed: %v", backend, load, seed, rep.Scenario("s").Regressions()[0])
				}
			}
		}
	}
}

func TestGateIntervalHoldingTheThresholdAsksForMorePairs(t *testing.T) {
	// A quiet host, but wall time noisy enough that 6 pairs cannot tell
	// a change within 5% from one beyond.
	p := pairedSides{pairs: 6, backend: "cuda", load1: 1, wallNoise: 0.08, wallShift: 1.04, deviceShift: 1}
	rep := p.judge(t, 7)
	m := rep.Scenario("s").Metric(results.SecondsPerProof)
	if m.Verdict != Inconclusive || m.MorePairs <= 0 || rep.Outcome() != NotJudged {
		t.Fatalf("verdict %s [%+.3f, %+.3f], more pairs %d, outcome %v; want inconclusive asking for pairs", m.Verdict, m.Lo, m.Hi, m.MorePairs, rep.Outcome())
	}
	if more := rep.MorePairs(); more["s"] < m.MorePairs {
		t.Errorf("MorePairs() = %v, want at least %d for s", more, m.MorePairs)
	}
}

func TestMorePairs(t *testing.T) {
	// spread returns n log ratios of robust spread sd (alternating ±sd
	// around c: MAD = sd, times 1.4826).
	spread := func(n int, c, sd float64) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = c + sd/1.4826*float64(1-2*(i%2))
		}
		return d
	}
	for _, tc := range []struct {
		name        string
		d           []float64
		h, est, thr float64
		want        int
	}{
		// Identical sides, 10 pairs of 3% spread, an interval of ±10%:
		// aim at 0.0333 from the threshold; the spread says
		// (1.96*1.023*0.03/0.0333)^2 = 3.3 pairs, already had: a round.
		{"identical, the spread narrow enough", spread(10, 0, 0.03), 0.10, 0, 0.05, 2},
		// 12% spread: its standard error, 1.023*0.12/sqrt(10) = 0.0388,
		// is past the 0.0333 aimed at, so aim there:
		// (1.96*1.023*0.12/0.0388)^2 = 38.4 -> 39 pairs.
		{"identical, wide spread", spread(10, 0, 0.12), 0.10, 0, 0.05, 30},
		// The old law (the interval seen shrinking as 1/sqrt) bounds it:
		// 10 * (0.04/0.0333)^2 = 14.4 -> 15 pairs.
		{"bounded by the interval seen", spread(10, 0, 0.12), 0.04, 0, 0.05, 6},
		// An estimate at the threshold aims at its own standard error
		// (1.023*0.03/sqrt(10)): 1.96^2*10 = 38.4 -> 39 pairs.
		{"the estimate at the threshold", spread(10, 0.05, 0.03), 0.05, 0.05, 0.05, 30},
		{"already resolvable", spread(10, 0, 0.03), 0.02, 0.10, 0.05, 0},
		{"a threshold of 0", spread(6, 0, 0.03), 0.05, 0.01, 0, 0},
	} {
		if got := morePairs(tc.d, tc.h, tc.est, tc.thr); got != tc.want {
			t.Errorf("%s: morePairs(%d pairs, %g, %g, %g) = %d, want %d", tc.name, len(tc.d), tc.h, tc.est, tc.thr, got, tc.want)
		}
	}
}

func TestStoredRunsGateAGPUsDeviceTimeOnly(t *testing.T) {
	for _, tc := range []struct {
		backend string
		gated   bool
	}{{"cuda", true}, {"cpu", false}} {
		p := pairedSides{pairs: 10, backend: tc.backend, load1: 1, wallNoise: 0.01, wallShift: 1, deviceShift: 1.25}
		base, cur := p.runs(3)
		rep, err := Compare(base, cur, Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := rep.Scenario("s").Metric(results.DeviceSecondsPerPartition)
		if m.Gated() != tc.gated || rep.Regressed() != tc.gated {
			t.Errorf("%s: gated %v, regressed %v; want %v", tc.backend, m.Gated(), rep.Regressed(), tc.gated)
		}
	}
}

// cpu_seconds reads both sides alike: a baseline from before the run's own
// CPU time was recorded is compared with the new side's whole-process
// figures, not with the narrower run figure (which would look like a 7%
// improvement between identical provers).
func TestCPUSecondsReadAlike(t *testing.T) {
	run := func(r *float64) *results.Repetition {
		return &results.Repetition{Status: results.StatusOK, CPUUserSeconds: 0.3, CPUSystemSeconds: 0.03, RunCPUSeconds: r}
	}
	narrow := 0.31
	def := results.MetricOf(results.CPUSeconds)
	old, cur := []*results.Repetition{run(nil)}, []*results.Repetition{run(&narrow)}
	if v, _ := def.Alike(old, cur).Value(cur[0]); !(math.Abs(v-0.33) <= 1e-12) {
		t.Errorf("mixed sides: new side read as %v, want the whole process's 0.33", v)
	}
	if v, _ := def.Alike(cur, cur).Value(cur[0]); v != narrow {
		t.Errorf("both sides narrow: %v, want the run's %v", v, narrow)
	}
}

// neighbourSides builds ab sides on a host whose neighbour comes and goes:
// a pair measured while the neighbour was away is quiet and its wall time
// is the code's (1% noise); a busy pair's wall time is the scheduler's
// (up to +60%, differently on each side). CPU time is unmoved.
func neighbourSides(pairs, quietEvery int, wallShift float64, seed uint64) (base, cur *results.Run) {
	rng := rand.New(rand.NewPCG(seed, 31))
	mk := func() *results.Run {
		return &results.Run{Environment: results.Environment{CPUs: 2, CPUModel: "x"}, Complete: true,
			Scenarios: []results.Scenario{{Name: "s", Backend: "cpu"}}}
	}
	base, cur = mk(), mk()
	for i := 1; i <= pairs; i++ {
		quiet := i%quietEvery == 0
		for side, run := range []*results.Run{base, cur} {
			wall, others := 1.0, 0.02
			if side == 1 {
				wall *= wallShift
			}
			wall *= 1 + 0.01*rng.NormFloat64()
			if !quiet {
				wall *= 1 + 0.6*rng.Float64()
				others = 0.5
			}
			cpu := 1 + 0.005*rng.NormFloat64()
			run.Scenarios[0].Repetitions = append(run.Scenarios[0].Repetitions, results.Repetition{
				Index: i, Status: results.StatusOK, Partitions: 6, Proofs: 1,
				SecondsPerProof: wall, PartitionsPerSecond: 6 / wall, RunCPUSeconds: &cpu, CPUUserSeconds: cpu,
				PeakRSSBytes: 100 << 20,
				HostLoad:     &results.HostLoad{Load1: 3, OthersCPUFraction: &others},
			})
		}
	}
	return base, cur
}

// TestWallTimeJudgedOnQuietPairs: with a neighbour that comes and goes,
// the pairs measured while it was away judge wall time, and the report
// says how many; identical sides pass, a 15% wall-only slowdown is caught;
// too few quiet pairs leave wall time unjudged (inconclusive), never
// passed.
func TestWallTimeJudgedOnQuietPairs(t *testing.T) {
	for _, tc := range []struct {
		name       string
		pairs      int
		quietEvery int
		shift      float64
		want       Outcome
		verdict    Verdict
	}{
		{"identical, half the pairs quiet", 24, 2, 1, Pass, Same},
		{"15% slower, half the pairs quiet", 24, 2, 1.15, Regressed, Regression},
		{"identical, a quarter quiet: 4 pairs", 16, 4, 1, NotJudged, Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cur := neighbourSides(tc.pairs, tc.quietEvery, tc.shift, 7)
			rep := judgePaired(t, base, cur)
			m := rep.Scenario("s").Metric(results.SecondsPerProof)
			if m == nil {
				t.Fatal("no seconds_per_proof in the report")
			}
			if rep.Outcome() != tc.want || m.Verdict != tc.verdict {
				t.Fatalf("outcome %v, seconds_per_proof %s (%s); want %v, %s", rep.Outcome(), m.Verdict, m.Note, tc.want, tc.verdict)
			}
			quiet := tc.pairs / tc.quietEvery
			if tc.want == NotJudged {
				if m.Unjudged != "host busy" || m.MorePairs <= 0 {
					t.Errorf("unjudged %q, %d more pairs: want host busy and an estimate", m.Unjudged, m.MorePairs)
				}
				return
			}
			if m.New == nil || m.New.N != quiet {
				t.Fatalf("judged on %v pairs, want the %d quiet ones", m.New, quiet)
			}
			if want := fmt.Sprintf("the %d of %d pairs", quiet, tc.pairs); !strings.Contains(m.Note, want) {
				t.Errorf("note %q does not say %q", m.Note, want)
			}
		})
	}
}

// TestARegressionWantsNoMorePairs: once a gated metric's regression is
// established, ab --until-resolved stops adding pairs to its scenario even
// though other metrics are still inconclusive: the verdict cannot become
// a pass (the H200's precompute runs went on for 38 pairs after device
// time had decided it).
func TestARegressionWantsNoMorePairs(t *testing.T) {
	p := pairedSides{pairs: 6, backend: "cuda", load1: 0.5, wallNoise: 0.12, wallShift: 1.02, deviceShift: 1.25}
	rep := p.judge(t, 3)
	sc := rep.Scenario("s")
	if sc == nil || sc.Verdict != Regression {
		t.Fatalf("scenario verdict %v, want a regression on device time", sc)
	}
	if len(rep.Unjudged()) == 0 {
		t.Fatal("no metric left inconclusive: the test needs wall time unresolved beside the regression")
	}
	if more := rep.MorePairs(); len(more) != 0 {
		t.Errorf("MorePairs() = %v after a regression was established, want none", more)
	}
}

// TestARegressionNamesWhatLooksRegressed: beside an established
// regression (device time +25%), a metric still inconclusive whose
// estimate is past its threshold (wall time +9% against 5%) is what
// ToName offers pairs for, so that the verdict can name it too; one whose
// estimate is within its threshold (+2%, TestARegressionWantsNoMorePairs'
// sides) is not.
func TestARegressionNamesWhatLooksRegressed(t *testing.T) {
	p := pairedSides{pairs: 6, backend: "cuda", load1: 0.5, wallNoise: 0.06, wallShift: 1.09, deviceShift: 1.25}
	rep := p.judge(t, 3)
	if sc := rep.Scenario("s"); sc == nil || sc.Verdict != Regression {
		t.Fatalf("scenario verdict %v, want a regression on device time", sc)
	}
	m := rep.Scenario("s").Metric(results.SecondsPerProof)
	if m == nil || m.Verdict != Inconclusive || !(m.Change > m.Threshold) {
		t.Fatalf("seconds_per_proof %+v: the test needs it inconclusive with its estimate past the threshold", m)
	}
	if more := rep.MorePairs(); len(more) != 0 {
		t.Errorf("MorePairs() = %v: a settled scenario is not among the unresolved", more)
	}
	if got := rep.ToName(); got["s"] < m.MorePairs || m.MorePairs <= 0 {
		t.Errorf("ToName() = %v, want s with at least seconds_per_proof's %d pairs", got, m.MorePairs)
	}

	within := pairedSides{pairs: 6, backend: "cuda", load1: 0.5, wallNoise: 0.12, wallShift: 1.02, deviceShift: 1.25}
	rep = within.judge(t, 3)
	w := rep.Scenario("s").Metric(results.SecondsPerProof)
	if w == nil || w.Verdict != Inconclusive || w.Change > w.Threshold {
		t.Fatalf("seconds_per_proof %+v: the test needs it inconclusive with its estimate within the threshold", w)
	}
	if got := rep.ToName(); len(got) != 0 {
		t.Errorf("ToName() = %v for an estimate of %+.1f%% against %.0f%%, want none", got, 100*w.Change, 100*w.Threshold)
	}
}
