package changepoint

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// noisy returns n values around level with Gaussian noise of relative
// width sd, from a fixed seed.
func noisy(rng *rand.Rand, n int, level, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level * (1 + sd*rng.NormFloat64())
	}
	return out
}

// withOutliers multiplies the values at the given indices by factor.
func withOutliers(v []float64, factor float64, at ...int) []float64 {
	for _, i := range at {
		v[i] *= factor
	}
	return v
}

func TestStepFound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(*rand.Rand) []float64
		want  []int
	}{
		{"12% up at 16 of 30, 3% noise", func(r *rand.Rand) []float64 {
			return append(noisy(r, 15, 100, 0.03), noisy(r, 15, 112, 0.03)...)
		}, []int{15}},
		{"12% up at 16 of 30, 3% noise, outliers both sides", func(r *rand.Rand) []float64 {
			return withOutliers(append(noisy(r, 15, 100, 0.03), noisy(r, 15, 112, 0.03)...), 1.5, 4, 22)
		}, []int{15}},
		{"8% down at 41 of 60, 2% noise, a low outlier", func(r *rand.Rand) []float64 {
			return withOutliers(append(noisy(r, 40, 50, 0.02), noisy(r, 20, 46, 0.02)...), 0.6, 10)
		}, []int{40}},
		{"two steps: up at 21, back at 41", func(r *rand.Rand) []float64 {
			v := append(noisy(r, 20, 10, 0.02), noisy(r, 20, 11, 0.02)...)
			return append(v, noisy(r, 20, 10, 0.02)...)
		}, []int{20, 40}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(5) {
				v := tc.build(rand.New(rand.NewPCG(seed, 1)))
				got, err := Detect(context.Background(), v, Options{Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("seed %d: change points %+v, want at %v", seed, got, tc.want)
				}
				for i, cp := range got {
					if d := cp.Index - tc.want[i]; d < -1 || d > 1 {
						t.Errorf("seed %d: change at %d, want %d±1", seed, cp.Index, tc.want[i])
					}
					if cp.PValue > DefaultFDR {
						t.Errorf("seed %d: p-value %g over the significance", seed, cp.PValue)
					}
				}
			}
		})
	}
}

// TestFlatNoiseHasNone: flat series, Gaussian or heavy-tailed with
// outliers, fixed seeds: no change point.
func TestFlatNoiseHasNone(t *testing.T) {
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 2))
		for name, v := range map[string][]float64{
			"gaussian 5%":        noisy(r, 30, 100, 0.05),
			"gaussian, outliers": withOutliers(noisy(r, 30, 100, 0.03), 1.4, 3, 17, 26),
			"long, 1%":           noisy(r, 120, 7, 0.01),
		} {
			got, err := Detect(context.Background(), v, Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Errorf("%s, seed %d: change points %+v in a flat series", name, seed, got)
			}
		}
	}
}

// TestFalseAlarmRate: over many flat series the share with a change point
// stays near the significance level, as a permutation test promises.
func TestFalseAlarmRate(t *testing.T) {
	const series = 200
	alarms := 0
	for seed := range uint64(series) {
		v := noisy(rand.New(rand.NewPCG(seed, 3)), 30, 1, 0.05)
		got, err := Detect(context.Background(), v, Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			alarms++
		}
	}
	t.Logf("false alarms in %d of %d flat series", alarms, series)
	if rate := float64(alarms) / series; rate > 2*DefaultFDR {
		t.Errorf("false alarms in %d of %d flat series (%.1f%%), want about %.0f%%", alarms, series, 100*rate, 100*DefaultFDR)
	}
}

func TestDeterministic(t *testing.T) {
	v := append(noisy(rand.New(rand.NewPCG(9, 9)), 12, 1, 0.05), noisy(rand.New(rand.NewPCG(10, 9)), 12, 1.05, 0.05)...)
	a, _ := Detect(context.Background(), v, Options{Seed: 4})
	b, _ := Detect(context.Background(), v, Options{Seed: 4})
	if len(a) != len(b) {
		t.Fatalf("two calls differ: %v, %v", a, b)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("two calls differ: %v, %v", a, b)
		}
	}
}

// TestIncrementalScanMatchesDirect checks the running sums of bestSplit
// against the statistic computed from its definition.
func TestIncrementalScanMatchesDirect(t *testing.T) {
	v := noisy(rand.New(rand.NewPCG(1, 1)), 17, 5, 0.2)
	for _, alpha := range []float64{0.5, 1, 1.5} {
		e := newEnergy(v, alpha, 3)
		tau, q, ok := bestSplit(e.d, identity(len(v)), 2, 15, 3)
		if !ok {
			t.Fatal("no split")
		}
		bestTau, bestQ := 0, math.Inf(-1)
		for s := 5; s <= 12; s++ {
			if q := direct(v[2:s], v[s:15], alpha); q > bestQ {
				bestTau, bestQ = s, q
			}
		}
		if tau != bestTau || !(math.Abs(q-bestQ) <= 1e-9*math.Abs(bestQ)) {
			t.Errorf("alpha %g: split %d (Q %g), direct %d (Q %g)", alpha, tau, q, bestTau, bestQ)
		}
	}
}

func direct(x, y []float64, alpha float64) float64 {
	m, n := float64(len(x)), float64(len(y))
	var between, within1, within2 float64
	for _, a := range x {
		for _, b := range y {
			between += math.Pow(math.Abs(a-b), alpha)
		}
	}
	for i := range x {
		for k := i + 1; k < len(x); k++ {
			within1 += math.Pow(math.Abs(x[i]-x[k]), alpha)
		}
	}
	for i := range y {
		for k := i + 1; k < len(y); k++ {
			within2 += math.Pow(math.Abs(y[i]-y[k]), alpha)
		}
	}
	e := 2*between/(m*n) - within1/(m*(m-1)/2) - within2/(n*(n-1)/2)
	return m * n / (m + n) * e
}

func TestBadInput(t *testing.T) {
	if _, err := Detect(context.Background(), []float64{1, math.NaN(), 2}, Options{}); !errors.Is(err, ErrNotFinite) {
		t.Errorf("NaN: %v", err)
	}
	for _, o := range []Options{{Alpha: 2}, {MinSize: 1}, {Permutations: -1}, {FDR: 1}} {
		if _, err := Detect(context.Background(), []float64{1, 2}, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if got, err := Detect(context.Background(), []float64{1, 2, 3, 4, 5}, Options{}); err != nil || len(got) != 0 {
		t.Errorf("a series too short to split: %v, %v", got, err)
	}
}

// BenchmarkDetect: a year of nightly medians with one step, the default
// 999 permutations.
func BenchmarkDetect(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	v := append(noisy(r, 200, 100, 0.03), noisy(r, 165, 110, 0.03)...)
	for b.Loop() {
		if _, err := Detect(context.Background(), v, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
