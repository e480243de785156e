package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"golang.org/x/perf/benchmath"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1, 1, 1, 9}, 1},
		{[]float64{-2, 10}, 4},
	} {
		in := slices.Clone(tc.in)
		if got := Median(in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Median(%v) reordered its argument to %v", tc.in, in)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

// The package document's claim: benchmath's AssumeNothing centre, which
// compare's intervals surround, is this median to within one rounding.
func TestMedianIsBenchmathCentre(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n < 60; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.ExpFloat64() * 1e3
		}
		c := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(v), &benchmath.DefaultThresholds), 0.95).Center
		if m := Median(v); math.Abs(m-c) > 2*math.Abs(math.Nextafter(m, math.Inf(1))-m) {
			t.Fatalf("n=%d: Median %v, benchmath centre %v", n, m, c)
		}
	}
}

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	ten := ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	for _, tc := range []struct {
		in   []time.Duration
		p    int
		want time.Duration
	}{
		{ms(5), 50, ms(5)[0]},
		{ms(5), 90, ms(5)[0]},
		{ms(10, 1, 3, 2), 50, ms(2)[0]}, // the lower middle: nearest rank, not the mean
		{ms(10, 1, 3, 2), 90, ms(10)[0]},
		{ten, 50, ms(5)[0]},
		{ten, 90, ms(9)[0]}, // exactly the 9th: integer rank
		{ten, 91, ms(10)[0]},
		{ten, 100, ms(10)[0]},
		{ten, 1, ms(1)[0]},
		{ten, 0, ms(1)[0]},
	} {
		in := slices.Clone(tc.in)
		if got := Percentile(in, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %d) = %v, want %v", tc.in, tc.p, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Percentile(%v) reordered its argument", tc.in)
		}
	}
	if got := Percentile([]float64{0.5, 0.25, 1}, 50); got != 0.5 {
		t.Errorf("float percentile: %v", got)
	}
}
