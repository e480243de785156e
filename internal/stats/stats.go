package stats

import (
	"cmp"
	"math"
	"slices"
)

// Median is the middle value of v, or the mean of the two middle values
// for an even count; NaN for none. v is not modified.
func Median(v []float64) float64 {
	s := sorted(v)
	n := len(s)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return s[n/2]
	default:
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// Percentile is the p-th percentile of v (0 < p <= 100) by the
// nearest-rank method: the smallest value with at least p% of the values
// at or below it, always one of the values (Percentile(v, 100) is the
// maximum). v must not be empty; it is not modified. The rank is computed
// in integers, so that p = 90 of 10 values is exactly the 9th.
func Percentile[T cmp.Ordered](v []T, p int) T {
	s := sorted(v)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 * n)
	return s[min(max(rank, 1), len(s))-1]
}

// MedianBy is the element of v whose key is the median: the lower middle
// for an even count, so that it is one of v's, ties kept in v's order. v
// must not be empty; it is not modified.
func MedianBy[T any](v []T, key func(T) float64) T {
	s := slices.Clone(v)
	slices.SortStableFunc(s, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return s[(len(s)-1)/2]
}

// sorted is v in ascending order: v itself when it already is (the
// callers that sort once and take several figures pay no copy), else a
// sorted copy.
func sorted[T cmp.Ordered](v []T) []T {
	if slices.IsSorted(v) {
		return v
	}
	return slices.Sorted(slices.Values(v))
}
