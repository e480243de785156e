package compare

import (
	"math"
	"slices"

	"github.com/provebench/provebench/internal/stats"
)

// Paired statistics for ab: the new/base ratio of a metric from repetitions
// run in pairs on one machine, one pair close together in time.
//
// The estimate is the Hodges–Lehmann estimator of the log ratios d_i =
// ln(new_i/base_i): the median of the Walsh averages (d_i + d_j)/2, i <= j.
// Its confidence interval comes from the exact null distribution of
// Wilcoxon's signed-rank statistic: the interval runs from the c-th smallest
// to the c-th largest Walsh average, c being the largest count whose lower
// tail probability stays within (1 - confidence)/2. Why this and not a t
// interval on the mean log ratio: on a shared machine a load spike hits
// one repetition of a pair and not the other; such a pair is an outlier
// that drags a mean and widens a t interval, while the Hodges–Lehmann
// estimate and its interval move by one rank. The method is exact and
// deterministic (no resampling, no seed): the same repetitions always give
// the same verdict. It assumes only that the log ratios are symmetric about
// their centre, which interleaved pairs make plausible: load falls on
// either side's repetition alike.

// MinPairs is the fewest pairs with which a 95% interval is finite: with 5
// pairs even all ratios on one side has probability 2/32 > 0.05.
const MinPairs = 6

// pairedInterval is the Hodges–Lehmann estimate of the centre of d and its
// confidence interval at level conf, with the level actually reached (the
// signed-rank distribution is discrete, so at least conf). ok is false
// when d has too few values for any interval at that level.
func pairedInterval(d []float64, conf float64) (est, lo, hi, level float64, ok bool) {
	n := len(d)
	if n == 0 {
		return 0, 0, 0, 0, false
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range d {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	slices.Sort(walsh)
	est = stats.Median(walsh)
	c, tail := signedRankCritical(n, (1-conf)/2)
	if c == 0 {
		return est, math.Inf(-1), math.Inf(1), 0, false
	}
	m := len(walsh)
	return est, walsh[c-1], walsh[m-c], 1 - 2*tail, true
}

// signedRankCritical returns the largest c such that P(T < c) <= alpha for
// the signed-rank statistic T of n pairs under the null hypothesis, and that
// tail probability P(T < c). The distribution is computed exactly: the
// number of subsets of {1..n} with each rank sum, as probabilities.
func signedRankCritical(n int, alpha float64) (c int, tail float64) {
	m := n * (n + 1) / 2
	p := make([]float64, m+1)
	p[0] = 1
	top := 0
	for k := 1; k <= n; k++ {
		top += k
		for s := top; s >= 0; s-- {
			v := p[s] * 0.5
			if s >= k {
				v += p[s-k] * 0.5
			}
			p[s] = v
		}
	}
	for c = 0; c <= m; c++ {
		if tail+p[c] > alpha {
			break
		}
		tail += p[c]
	}
	return c, tail
}
