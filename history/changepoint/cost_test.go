package changepoint

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// stepped is m series of n values at relative noise sd, each with a step
// of relative size step at index at.
func stepped(seed uint64, m, n, at int, step, sd float64) []Series {
	rng := rand.New(rand.NewPCG(seed, 78))
	out := make([]Series, m)
	for i := range out {
		v := noisy(rng, n, 100, sd)
		for j := at; j < n; j++ {
			v[j] *= 1 + step
		}
		out[i] = Series{Values: v, Seed: seed*1e6 + uint64(i)}
	}
	return out
}

// Issue 42 case 3: 1000 configurations x 30 nights at 3% noise, a +12%
// step in every one. Drawing every test to Draws (10m/q, a million) cost
// O(m²): 1000 series did not finish in 40 minutes. Deciding each test as
// soon as its side of the level is certain, the family is decided at q,
// about exceedances/q draws a test: the work counted here (null series
// drawn) stays within a few thousand a series, and every step is found
// where it is.
func TestFamilyOfChangesIsLinear(t *testing.T) {
	const m = 1000
	r, err := DetectFamily(context.Background(), stepped(1, m, 30, 15, 0.12, 0.03), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if limit := int64(m) * 4 * firstRound; r.NullDraws > limit {
		t.Errorf("%d null series drawn for %d series, want at most %d (every test drawn to the end: %d)", r.NullDraws, m, limit, int64(m)*int64(r.Draws))
	}
	missed := 0
	for i, cps := range r.ChangePoints {
		if !slices.ContainsFunc(cps, func(c ChangePoint) bool { return c.Index >= 13 && c.Index <= 17 }) {
			missed++
			t.Logf("series %d: %+v", i, cps)
		}
	}
	if missed > 0 {
		t.Errorf("the step missed in %d of %d series", missed, m)
	}
	t.Logf("%d series: %d null series drawn (%.0f a series; drawn to the end: %d a series), level %g", m, r.NullDraws, float64(r.NullDraws)/m, r.Draws, r.Level)
}

// The early decisions change no answer: the same families, each test
// drawn to its end (the reference), give the same change points, at
// the same indices, for families of changes, of flat series, of one
// change among flat ones, of two changes in a series, and of steps near
// the edge of detection; by both tests (30 values: Gaussian; 60 alone:
// permutation).
func TestEarlyDecisionsMatchExhaustive(t *testing.T) {
	families := map[string][]Series{
		"all stepped":   stepped(2, 20, 30, 15, 0.12, 0.03),
		"flat":          family(3, 20, 30, 0, 0, 0.03),
		"one step":      family(4, 20, 30, 15, 0.12, 0.03),
		"edge":          stepped(5, 20, 30, 15, 0.035, 0.03),
		"permutation":   stepped(6, 1, 60, 30, 0.05, 0.03),
		"two steps":     twoSteps(7, 10),
		"mixed lengths": append(stepped(8, 10, 12, 6, 0.2, 0.03), family(9, 10, 45, 20, 0.08, 0.03)...),
	}
	for name, fam := range families {
		early, err := DetectFamily(context.Background(), fam, Options{})
		if err != nil {
			t.Fatal(err)
		}
		full, err := DetectFamily(context.Background(), fam, Options{exhaustive: true})
		if err != nil {
			t.Fatal(err)
		}
		if early.Level != full.Level {
			t.Errorf("%s: level %g, drawn to the end %g", name, early.Level, full.Level)
		}
		found := 0
		for i := range fam {
			a, b := indices(early.ChangePoints[i]), indices(full.ChangePoints[i])
			found += len(b)
			if !slices.Equal(a, b) {
				t.Errorf("%s: series %d: change points at %v, drawn to the end %v", name, i, a, b)
			}
		}
		t.Logf("%s: %d change points; %d null series drawn, %d drawn to the end", name, found, early.NullDraws, full.NullDraws)
		if early.NullDraws > full.NullDraws {
			t.Errorf("%s: deciding early drew more (%d) than drawing to the end (%d)", name, early.NullDraws, full.NullDraws)
		}
	}
}

// twoSteps is m series of 45 values with steps at 15 and 30.
func twoSteps(seed uint64, m int) []Series {
	out := stepped(seed, m, 45, 15, 0.1, 0.02)
	for i := range out {
		for j := 30; j < 45; j++ {
			out[i].Values[j] *= 1.1
		}
	}
	return out
}

func indices(cps []ChangePoint) []int {
	var out []int
	for _, c := range cps {
		out = append(out, c.Index)
	}
	return out
}

// A rate the family's tests cannot honour (more than MaxDraws draws a
// test) is refused at once, not drawn for ever; a done context stops the
// draws.
func TestFamilyBounds(t *testing.T) {
	fam := stepped(1, 2, 30, 15, 0.12, 0.03)
	for _, q := range []float64{1e-300, 1e-6} {
		if _, err := DetectFamily(context.Background(), fam, Options{FDR: q}); !errors.Is(err, ErrFDRTooSmall) {
			t.Errorf("FDR %g: %v, want ErrFDRTooSmall", q, err)
		}
	}
	if _, err := DetectFamily(context.Background(), fam, Options{FDR: 1e-4}); err != nil {
		t.Errorf("FDR 1e-4 over 2 series (2·10^5 draws): %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DetectFamily(ctx, stepped(1, 50, 30, 15, 0.12, 0.03), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v", err)
	}
}

// BenchmarkFamilyOfChanges is the nightly history's worst case: 1000
// configurations x 30 nights, a step in every one.
func BenchmarkFamilyOfChanges(b *testing.B) {
	fam := stepped(1, 1000, 30, 15, 0.12, 0.03)
	for b.Loop() {
		if _, err := DetectFamily(context.Background(), fam, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
