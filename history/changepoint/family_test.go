package changepoint

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

func identity(n int) []int {
	id := make([]int, n)
	for i := range id {
		id[i] = i
	}
	return id
}

// TestPermutedScanMatchesDirect: the scan of a permutation read through
// the distance matrix equals the statistic of the permuted values.
func TestPermutedScanMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	v := noisy(rng, 16, 5, 0.2)
	e := newEnergy(v, 0.5, 3)
	idx := identity(len(v))
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	perm := make([]float64, len(v))
	for i, k := range idx {
		perm[i] = v[k]
	}
	tau, q, _ := bestSplit(e.d, idx, 0, 16, 3)
	bestTau, bestQ := 0, math.Inf(-1)
	for s := 3; s <= 13; s++ {
		if q := direct(perm[:s], perm[s:], 0.5); q > bestQ {
			bestTau, bestQ = s, q
		}
	}
	if tau != bestTau || !(math.Abs(q-bestQ) <= 1e-9*math.Abs(bestQ)) { // a NaN Q fails too
		t.Errorf("split %d (Q %g), direct %d (Q %g)", tau, q, bestTau, bestQ)
	}
}

// TestStudentScanMatchesDirect checks the t² scan against its definition,
// and its two degenerate cases.
func TestStudentScanMatchesDirect(t *testing.T) {
	v := noisy(rand.New(rand.NewPCG(4, 4)), 13, 1e9, 0.05)
	st := newStudent(v, 3)
	tau, q, ok := st.bestSplit(v, 1, 13)
	if !ok {
		t.Fatal("no split")
	}
	bestTau, bestQ := 0, math.Inf(-1)
	for s := 4; s <= 10; s++ {
		x, y := v[1:s], v[s:13]
		mx, my := mean(x), mean(y)
		ss := 0.0
		for _, a := range x {
			ss += (a - mx) * (a - mx)
		}
		for _, b := range y {
			ss += (b - my) * (b - my)
		}
		pooled := ss / float64(len(x)+len(y)-2)
		if q := (my - mx) * (my - mx) / (pooled * (1/float64(len(x)) + 1/float64(len(y)))); q > bestQ {
			bestTau, bestQ = s, q
		}
	}
	if tau != bestTau || !(math.Abs(q-bestQ) <= 1e-6*bestQ) { // a NaN Q fails too
		t.Errorf("split %d (t² %g), direct %d (t² %g)", tau, q, bestTau, bestQ)
	}
	step := []float64{27e6, 27e6, 27e6, 27e6, 40.5e6, 40.5e6, 40.5e6}
	if tau, q, _ := newStudent(step, 3).bestSplit(step, 0, 7); tau != 4 || !math.IsInf(q, 1) {
		t.Errorf("a noise-free step: split %d, t² %g; want 4, +Inf", tau, q)
	}
	flat := []float64{7, 7, 7, 7, 7, 7}
	if _, q, ok := newStudent(flat, 3).bestSplit(flat, 0, 6); !ok || q != 0 {
		t.Errorf("a constant series: t² %g, want 0", q)
	}
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func TestPermutationFrom(t *testing.T) {
	for _, tc := range []struct {
		m    int
		q    float64
		want int
	}{{1, 0.01, 15}, {28, 0.01, 42}, {1, 0.05, 9}, {1000, 0.01, 135}} {
		if got := PermutationFrom(3, tc.m, tc.q); got != tc.want {
			t.Errorf("PermutationFrom(3, %d, %g) = %d, want %d", tc.m, tc.q, got, tc.want)
		}
		// The rule's promise: at that length the permutation test can
		// reach half the family's first bound; one value earlier it cannot.
		n, half := tc.want, tc.q/float64(2*tc.m)
		if 2/binomial(n, 3) > half || 2/binomial(n-1, 3) <= half {
			t.Errorf("m %d q %g: 2/C(%d,3) = %g, 2/C(%d,3) = %g around q/2m = %g", tc.m, tc.q, n, 2/binomial(n, 3), n-1, 2/binomial(n-1, 3), half)
		}
	}
}

// family is m-1 flat series and, when step is not 0, series 0 with a step
// of that relative size at index at; n values each, relative noise sd.
func family(seed uint64, m, n, at int, step, sd float64) []Series {
	rng := rand.New(rand.NewPCG(seed, 77))
	out := make([]Series, m)
	for i := range out {
		v := noisy(rng, n, 100, sd)
		if i == 0 && step != 0 {
			for j := at; j < n; j++ {
				v[j] *= 1 + step
			}
		}
		out[i] = Series{Values: v, Seed: seed*1e6 + uint64(i)}
	}
	return out
}

// TestYoungHistory is issue 32's item 5: a +50% step at night 4 of a
// young series (the values before it run 0..2) is found from its third
// night on (night 6: 3 runs a side), alone and in a family of 28 series
// (the nightly recipe's scenarios/ci.yaml: 4 configurations, 7 metrics on
// the CPU), by the Gaussian test. Before it, a permutation test could not
// reach p <= 0.01 with 6 values (its smallest p-value is 2/C(6,3) = 0.1).
// Noise-free (peak RSS is nearly so), every night from the sixth finds it;
// at 3% noise a series alone does too, and in the family of 28 at least
// one of nights 6-8 does, which is what `--recent 5` needs.
func TestYoungHistory(t *testing.T) {
	for _, m := range []int{1, 28} {
		for _, sd := range []float64{0, 0.03} {
			for seed := range uint64(10) {
				nights := 0
				for n := 6; n <= 8; n++ {
					r, err := DetectFamily(context.Background(), family(seed, m, n, 3, 0.5, sd), Options{})
					if err != nil {
						t.Fatal(err)
					}
					cps := r.ChangePoints[0]
					switch {
					case len(cps) == 1 && cps[0].Index == 3 && cps[0].Test == Gaussian:
						nights++
					case len(cps) > 0:
						t.Errorf("family of %d, noise %g, night %d, seed %d: %+v, want the step at index 3 (Gaussian test)", m, sd, n, seed, cps)
					case sd == 0 || m == 1:
						t.Errorf("family of %d, noise %g, night %d, seed %d: the step not found (p-value bound %g)", m, sd, n, seed, r.Level)
					}
					for i, c := range r.ChangePoints[1:] {
						if len(c) > 0 {
							t.Errorf("family of %d, noise %g, night %d, seed %d: flat series %d has %+v", m, sd, n, seed, i+1, c)
						}
					}
				}
				if nights == 0 {
					t.Errorf("family of %d, noise %g, seed %d: the step not found on nights 6-8", m, sd, seed)
				}
			}
		}
	}
	// Five values cannot be split into two sides of 3: not judged.
	r, err := DetectFamily(context.Background(), family(1, 3, 5, 3, 0.5, 0), Options{})
	if err != nil || r.Judged != 0 || r.ChangePoints[0] != nil {
		t.Errorf("5 values: judged %d, %+v, %v", r.Judged, r.ChangePoints, err)
	}
}

// TestFamilyFalseDiscoveries is issue 32's item 6: 1000 flat series of 30
// runs at 3% noise, 10 seeded families. Benjamini-Hochberg at q = 0.01
// bounds the chance that a family with no change reports any change point
// by 1%: 10 families expect at most 0.1 with one; the test allows one.
// (Tested one by one at p <= 0.01, each family had about 10.)
func TestFamilyFalseDiscoveries(t *testing.T) {
	if testing.Short() {
		t.Skip("10 families of 1000 series")
	}
	withAlarm, uncorrected := 0, 0
	for seed := range uint64(10) {
		fam := family(seed, 1000, 30, 0, 0, 0.03)
		r, err := DetectFamily(context.Background(), fam, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Judged != 1000 || r.Draws != 1000000 {
			t.Fatalf("judged %d with %d draws, want 1000 with 1000000", r.Judged, r.Draws)
		}
		found := 0
		for _, c := range r.ChangePoints {
			found += len(c)
		}
		if found > 0 {
			withAlarm++
			t.Logf("family %d: %d false change points (level %g)", seed, found, r.Level)
		}
		if seed == 0 {
			for _, s := range fam[:200] {
				if cps, _ := Detect(context.Background(), s.Values, Options{Seed: s.Seed}); len(cps) > 0 {
					uncorrected++
				}
			}
		}
	}
	t.Logf("families with a false change point: %d of 10; 200 of the series tested alone at p <= 0.01: %d with one", withAlarm, uncorrected)
	if withAlarm > 1 {
		t.Errorf("%d of 10 flat families reported change points, want at most 1 (expected 0.1)", withAlarm)
	}
	if uncorrected == 0 {
		t.Error("no flat series tested alone had a change point: the family's correction is not shown to matter")
	}
}

// TestFamilyFindsLoneStep: one series with a 12% step among 999 flat ones
// (30 runs, 3% noise) is still found, at its run, and nothing else is.
func TestFamilyFindsLoneStep(t *testing.T) {
	for seed := range uint64(2) {
		r, err := DetectFamily(context.Background(), family(seed, 1000, 30, 15, 0.12, 0.03), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if cps := r.ChangePoints[0]; len(cps) != 1 || cps[0].Index < 14 || cps[0].Index > 16 {
			t.Errorf("seed %d: the step's change points %+v, want one at 15±1", seed, cps)
		}
		for i, c := range r.ChangePoints[1:] {
			if len(c) > 0 {
				t.Errorf("seed %d: flat series %d has %+v", seed, i+1, c)
			}
		}
	}
}

// TestGaussianFalseAlarmRate: flat young series (8 values), Gaussian
// noise or with an outlier night of +40%: the share with a change point
// stays near the level.
func TestGaussianFalseAlarmRate(t *testing.T) {
	const series = 300
	for _, outlier := range []bool{false, true} {
		alarms := 0
		for seed := range uint64(series) {
			rng := rand.New(rand.NewPCG(seed, 5))
			v := noisy(rng, 8, 1, 0.03)
			if outlier {
				v[rng.IntN(8)] *= 1.4
			}
			got, err := Detect(context.Background(), v, Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > 0 {
				alarms++
			}
		}
		t.Logf("outlier %v: false alarms in %d of %d flat young series", outlier, alarms, series)
		if rate := float64(alarms) / series; rate > 2*DefaultFDR {
			t.Errorf("outlier %v: false alarms in %d of %d (%.1f%%), want about %.0f%%", outlier, alarms, series, 100*rate, 100*DefaultFDR)
		}
	}
}

// TestDetectionNight measures from which night after a step (the step's
// own night the first) the step is found in at least 90% of 40 seeded
// series at 3% noise: a step at night 4 (a young history) and at night 21
// and 41, for one series and in the nightly recipe's family of 28 (the
// others flat). It always holds the recipe's promise, +50% found by its
// fourth night (within `--recent 5`), a few seconds; the smaller steps
// whose table the README quotes (this test's log) take half a minute more
// and run with PROVEBENCH_MEASURE_DETECTION=1.
func TestDetectionNight(t *testing.T) {
	steps := []float64{0.5}
	if os.Getenv("PROVEBENCH_MEASURE_DETECTION") != "" {
		steps = []float64{0.05, 0.12, 0.5}
	}
	const trials = 40
	var table strings.Builder
	fmt.Fprintf(&table, "%-8s %-6s %-10s %s\n", "family", "step", "step at", "found from night (after the step)")
	for _, m := range []int{1, 28} {
		for _, step := range steps {
			for _, at := range []int{3, 20, 40} {
				night := 0
				for k := 3; k <= 12 && night == 0; k++ {
					found := 0
					for seed := range uint64(trials) {
						r, err := DetectFamily(context.Background(), family(seed+100, m, at+k, at, step, 0.03), Options{})
						if err != nil {
							t.Fatal(err)
						}
						if slices.ContainsFunc(r.ChangePoints[0], func(c ChangePoint) bool { return c.Index >= at-1 && c.Index <= at+1 }) {
							found++
						}
					}
					if found*10 >= trials*9 {
						night = k
					}
				}
				when := fmt.Sprint(night)
				if night == 0 {
					when = "after 12"
				}
				fmt.Fprintf(&table, "%-8d %-6s %-10d %s\n", m, fmt.Sprintf("+%.0f%%", 100*step), at+1, when)
				if step == 0.5 && (night == 0 || night > 4) {
					t.Errorf("family of %d: +50%% at night %d found from night %s after it, want the third or fourth (within --recent 5)", m, at+1, when)
				}
			}
		}
	}
	t.Logf("3%% Gaussian noise, q = %g, %d series a cell:\n%s", DefaultFDR, trials, table.String())
}
