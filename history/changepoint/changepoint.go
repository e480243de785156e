package changepoint

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Options tunes Detect. The zero value asks for the defaults.
type Options struct {
	// Alpha is the exponent of the distances, in (0, 2); 0 means 0.5.
	// Alpha below 2 makes the statistic sensitive to any change of
	// distribution, not the mean only; the smaller it is, the less one
	// far value weighs (on 30 values with a 12% step, 3% noise and two
	// 50% outliers, alpha 1 missed the step in 1 series of 40, 1.5 in 33,
	// 0.5 in none, with no false alarm on flat ones).
	Alpha float64
	// MinSize is the fewest values on either side of a split (at least 2,
	// for the within-side distances); 0 means 3.
	MinSize int
	// Permutations is the number of permuted series the test draws; 0
	// means 999 (p-values down to 0.001).
	Permutations int
	// Significance is the largest p-value a change point may have; 0 means
	// 0.01: on a nightly history of many metrics, 0.05 would flag one flat
	// series in twenty.
	Significance float64
	// Seed seeds the permutations, so that a series gives the same answer
	// every time.
	Seed uint64
}

// Defaults.
const (
	DefaultAlpha        = 0.5
	DefaultMinSize      = 3
	DefaultPermutations = 999
	DefaultSignificance = 0.01
)

func (o Options) withDefaults() (Options, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.MinSize == 0 {
		o.MinSize = DefaultMinSize
	}
	if o.Permutations == 0 {
		o.Permutations = DefaultPermutations
	}
	if o.Significance == 0 {
		o.Significance = DefaultSignificance
	}
	switch {
	case !(o.Alpha > 0 && o.Alpha < 2):
		return o, fmt.Errorf("changepoint: alpha %g: want 0 < alpha < 2", o.Alpha)
	case o.MinSize < 2:
		return o, fmt.Errorf("changepoint: minimum segment %d: want at least 2", o.MinSize)
	case o.Permutations < 1:
		return o, fmt.Errorf("changepoint: %d permutations: want at least 1", o.Permutations)
	case !(o.Significance > 0 && o.Significance < 1):
		return o, fmt.Errorf("changepoint: significance %g: want 0 < p < 1", o.Significance)
	}
	return o, nil
}

// ChangePoint is where a new regime starts.
type ChangePoint struct {
	// Index is the first value of the new regime.
	Index int
	// Q is the divergence statistic of the split that found it.
	Q float64
	// PValue is the permutation test's p-value for that split.
	PValue float64
}

// ErrNotFinite is returned for a series holding NaN or an infinity.
var ErrNotFinite = errors.New("changepoint: the series holds a value that is not finite")

// Detect returns the change points of the series, in the order of their
// indices. A series shorter than two minimum segments has none.
func Detect(values []float64, opts Options) ([]ChangePoint, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, ErrNotFinite
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	bounds := []int{0, len(values)} // segment boundaries, sorted
	var found []ChangePoint
	d := distances(values, o.Alpha)
	for {
		tau, q, ok := bestOverSegments(d, bounds, o.MinSize)
		if !ok {
			break
		}
		p := permutationPValue(values, bounds, q, o, rng)
		if p > o.Significance {
			break
		}
		found = append(found, ChangePoint{Index: tau, Q: q, PValue: p})
		i, _ := slices.BinarySearch(bounds, tau)
		bounds = slices.Insert(bounds, i, tau)
	}
	slices.SortFunc(found, func(a, b ChangePoint) int { return a.Index - b.Index })
	return found, nil
}

// permutationPValue is the share of series, permuted within each of the
// current segments, whose best split is at least as divergent as q (the
// observed series counted among them). It stops as soon as the share
// cannot fall back to the significance level, returning what it has
// counted: more than the significance, which is all the caller asks then
// (most candidates of a series without a change end this way, after a few
// dozen permutations).
func permutationPValue(values []float64, bounds []int, q float64, o Options, rng *rand.Rand) float64 {
	perm := slices.Clone(values)
	d := newMatrix(len(values))
	atLeast := 0
	for range o.Permutations {
		for s := 0; s+1 < len(bounds); s++ {
			seg := perm[bounds[s]:bounds[s+1]]
			rng.Shuffle(len(seg), func(i, j int) { seg[i], seg[j] = seg[j], seg[i] })
		}
		fill(d, perm, o.Alpha)
		_, pq, ok := bestOverSegments(d, bounds, o.MinSize)
		if ok && pq >= q {
			atLeast++
			if p := float64(1+atLeast) / float64(1+o.Permutations); p > o.Significance {
				return p
			}
		}
	}
	return float64(1+atLeast) / float64(1+o.Permutations)
}

// distances is the matrix |vi − vj|^alpha.
func distances(values []float64, alpha float64) [][]float64 {
	d := newMatrix(len(values))
	fill(d, values, alpha)
	return d
}

func newMatrix(n int) [][]float64 {
	d := make([][]float64, n)
	flat := make([]float64, n*n)
	for i := range d {
		d[i] = flat[i*n : (i+1)*n]
	}
	return d
}

// fill sets d to the distances of values.
func fill(d [][]float64, values []float64, alpha float64) {
	n := len(values)
	for i := range n {
		for j := i + 1; j < n; j++ {
			v := math.Abs(values[i] - values[j])
			if alpha != 1 {
				v = math.Pow(v, alpha)
			}
			d[i][j], d[j][i] = v, v
		}
	}
}

// bestOverSegments is the best split over every segment between bounds:
// its index and statistic; ok is false when no segment can be split.
func bestOverSegments(d [][]float64, bounds []int, minSize int) (tau int, q float64, ok bool) {
	for s := 0; s+1 < len(bounds); s++ {
		t, sq, sok := bestSplit(d, bounds[s], bounds[s+1], minSize)
		if sok && (!ok || sq > q) {
			tau, q, ok = t, sq, true
		}
	}
	return tau, q, ok
}

// bestSplit scans the splits of the segment [a, b) with at least minSize
// values a side, keeping the three sums of distances (within the left
// side, within the right, between them) up to date as the split moves:
// O(n²) for the whole scan.
func bestSplit(d [][]float64, a, b, minSize int) (tau int, q float64, ok bool) {
	if b-a < 2*minSize {
		return 0, 0, false
	}
	first := a + minSize
	var left, right, between float64
	for i := a; i < b; i++ {
		for j := i + 1; j < b; j++ {
			switch {
			case j < first:
				left += d[i][j]
			case i >= first:
				right += d[i][j]
			default:
				between += d[i][j]
			}
		}
	}
	for t := first; t <= b-minSize; t++ {
		if t > first {
			// Value t-1 moves from the right side to the left.
			m := t - 1
			var toLeft, toRight float64
			for i := a; i < m; i++ {
				toLeft += d[i][m]
			}
			for j := m + 1; j < b; j++ {
				toRight += d[m][j]
			}
			left += toLeft
			right -= toRight
			between += toRight - toLeft
		}
		stat := divergence(float64(t-a), float64(b-t), left, right, between)
		if !ok || stat > q {
			tau, q, ok = t, stat, true
		}
	}
	return tau, q, ok
}

// divergence is the scaled energy distance of two sides of sizes m and n
// from their sums of distances.
func divergence(m, n, left, right, between float64) float64 {
	e := 2*between/(m*n) - left/(m*(m-1)/2) - right/(n*(n-1)/2)
	return m * n / (m + n) * e
}
