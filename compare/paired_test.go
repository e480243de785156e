package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

func TestSignedRankCritical(t *testing.T) {
	// Tables of the Wilcoxon signed-rank test, two-sided 5%: no critical
	// value below 6 pairs; reject at T <= 0 for 6, T <= 8 for 10, T <= 25
	// for 15 (so c, the count of excluded ranks, is one more).
	for _, tc := range []struct{ n, c int }{{5, 0}, {6, 1}, {10, 9}, {15, 26}} {
		if c, tail := signedRankCritical(tc.n, 0.025); c != tc.c || !(tail <= 0.025) {
			t.Errorf("n=%d: c=%d tail=%.4f, want c=%d", tc.n, c, tail, tc.c)
		}
	}
}

func TestPairedIntervalCoversTheShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	missed := 0
	const trials = 400
	for range trials {
		d := make([]float64, 10)
		for i := range d {
			d[i] = 0.1 + 0.05*rng.NormFloat64()
		}
		_, lo, hi, level, ok := pairedInterval(d, 0.95)
		if !ok || !(level >= 0.95) {
			t.Fatalf("10 pairs: ok %v level %.3f", ok, level)
		}
		if !(lo <= 0.1 && hi >= 0.1) { // a NaN bound misses too
			missed++
		}
	}
	// At 95% (here 95.1%) about 20 of 400 intervals miss; 40 would mean
	// the interval is too narrow.
	if missed > 40 {
		t.Errorf("the interval missed the true shift %d times in %d", missed, trials)
	}
}

func TestPairedVerdict(t *testing.T) {
	// Pairs share the machine's load: a common factor up to 2x, which a
	// comparison of the sides' medians could not see through.
	rng := rand.New(rand.NewPCG(3, 4))
	sides := func(slowdown float64) (base, cur []float64) {
		for range 10 {
			load := 1 + rng.Float64()
			base = append(base, load*(1+0.01*rng.NormFloat64()))
			cur = append(cur, load*slowdown*(1+0.01*rng.NormFloat64()))
		}
		return base, cur
	}
	for _, tc := range []struct {
		slowdown float64
		want     Verdict
	}{{1, Same}, {1.15, Regression}, {1.03, Worse}, {0.85, Better}} {
		b, c := sides(tc.slowdown)
		m := MetricResult{Metric: results.SecondsPerProof, Better: results.LowerIsBetter, Threshold: 0.05}
		pairedVerdict(&m, b, c)
		if m.Verdict != tc.want {
			t.Errorf("x%.2f: verdict %s [%+.3f, %+.3f], want %s", tc.slowdown, m.Verdict, m.Lo, m.Hi, tc.want)
		}
		if !(math.Abs(m.Change-(tc.slowdown-1)) <= 0.02) || !(m.Detectable > 0 && m.Detectable <= 0.02) { // NaN fails too
			t.Errorf("x%.2f: change %+.3f, detectable %.3f", tc.slowdown, m.Change, m.Detectable)
		}
	}
	m := MetricResult{Metric: results.SecondsPerProof, Better: results.LowerIsBetter, Threshold: 0.05}
	pairedVerdict(&m, []float64{1, 1, 1, 1, 1}, []float64{2, 2, 2, 2, 2.1})
	if m.Verdict != TooFewSamples {
		t.Errorf("5 pairs: verdict %s, want too few samples", m.Verdict)
	}
}

func TestOutliers(t *testing.T) {
	idx, z := outliers([]float64{1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.60})
	if len(idx) != 1 || idx[0] != 6 || z[0] < OutlierZ {
		t.Errorf("outliers %v %v, want the 1.60 at 6", idx, z)
	}
	if idx, _ := outliers([]float64{1, 1, 1, 1, 2}); idx != nil {
		t.Errorf("MAD 0: outliers %v, want none", idx)
	}
}

func TestOversubscribedHostDoesNotGateWallTime(t *testing.T) {
	mk := func(load float64, spp float64) *results.Run {
		run := &results.Run{Environment: results.Environment{CPUs: 2, CPUModel: "x"}}
		sc := results.Scenario{Name: "s", Backend: "cpu"}
		for i := 1; i <= 10; i++ {
			sc.Repetitions = append(sc.Repetitions, results.Repetition{
				Index: i, Status: results.StatusOK, SecondsPerProof: spp * (1 + 0.001*float64(i)), PartitionsPerSecond: 1 / spp,
				CPUUserSeconds: 1, PeakRSSBytes: 100, HostLoad: &results.HostLoad{Load1: load},
			})
		}
		run.Scenarios = []results.Scenario{sc}
		return run
	}
	for _, tc := range []struct {
		load float64
		want Outcome
	}{{1.5, Regressed}, {11, NotJudged}} {
		rep, err := Compare(mk(tc.load, 1), mk(tc.load, 1.5), Options{Paired: true})
		if err != nil {
			t.Fatal(err)
		}
		m := rep.Scenario("s").Metric(results.SecondsPerProof)
		// Oversubscribed: wall time is not judged, and that is not a pass.
		if rep.Outcome() != tc.want || (tc.want == NotJudged && (m.Verdict != Inconclusive || m.Unjudged != "host oversubscribed")) {
			t.Errorf("load %g on 2 CPUs, +50%% wall time: outcome %v, verdict %s (%s); want %v", tc.load, rep.Outcome(), m.Verdict, m.Unjudged, tc.want)
		}
		if tc.want == NotJudged && !strings.Contains(strings.Join(rep.Warnings, " "), "oversubscribed") {
			t.Errorf("warnings %q do not say the host was oversubscribed", rep.Warnings)
		}
	}
}
