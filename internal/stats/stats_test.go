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
		if m := Median(v); !(math.Abs(m-c) <= 2*math.Abs(math.Nextafter(m, math.Inf(1))-m)) { // NaN fails too
			t.Fatalf("n=%d: Median %v, benchmath centre %v", n, m, c)
		}
	}
}

func TestPercentile(t *testing.T) {
	ten := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		in      []int
		p, want int
	}{
		{[]int{5}, 50, 5},
		{[]int{5}, 90, 5},
		{[]int{10, 1, 3, 2}, 50, 2}, // the lower middle: nearest rank, not the mean
		{[]int{10, 1, 3, 2}, 90, 10},
		{ten, 50, 5},
		{ten, 90, 9}, // exactly the 9th: integer rank
		{ten, 91, 10},
		{ten, 100, 10},
		{ten, 1, 1},
		{ten, 0, 1},
	} {
		in := slices.Clone(tc.in)
		if got := Percentile(in, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %d) = %v, want %v", tc.in, tc.p, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Percentile(%v) reordered its argument", tc.in)
		}
	}
	if got := Percentile([]time.Duration{3 * time.Second, time.Second, 2 * time.Second}, 50); got != 2*time.Second {
		t.Errorf("duration percentile: %v", got)
	}
}

// MedianBy picks the lower middle element by its key, ties in order, and
// leaves v as it was.
func TestMedianBy(t *testing.T) {
	type rep struct {
		name string
		v    float64
	}
	v := []rep{{"a", 3}, {"b", 1}, {"c", 2}, {"d", 2}}
	if got := MedianBy(v, func(r rep) float64 { return r.v }); got.name != "c" {
		t.Errorf("MedianBy = %s, want c (the lower middle of 1, 2, 2, 3, ties in order)", got.name)
	}
	if v[0].name != "a" {
		t.Error("MedianBy reordered its input")
	}
	if got := MedianBy(v[:3], func(r rep) float64 { return r.v }); got.name != "c" {
		t.Errorf("odd count: %s, want c", got.name)
	}
}
