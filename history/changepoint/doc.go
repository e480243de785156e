// Package changepoint finds the points where a series' distribution
// changes: E-Divisive with means, the hierarchical energy-statistic method
// of Matteson and James, with a permutation test deciding whether each
// split is significant.
//
// It knows nothing of where the series come from: give it the values in
// order (one per commit, say) and it returns the indices where a new
// regime starts, each with the permutation test's p-value.
//
// # Method
//
// For a split of a segment Z[a:b) at τ into X = Z[a:τ) (m values) and
// Y = Z[τ:b) (n values), the divergence statistic is
//
//	Q(τ) = mn/(m+n) · ( 2/(mn) Σ|Xi−Yj|^α − 1/C(m,2) Σ|Xi−Xk|^α − 1/C(n,2) Σ|Yj−Yk|^α )
//
// an empirical energy distance between the two sides scaled by their
// sizes (Székely and Rizzo's energy statistics; α in (0, 2), 0.5 by
// default, which tempers outliers). The
// best split of a segment maximises Q. Starting from the whole series,
// the candidate with the largest Q over all current segments is tested:
// the values of each segment are permuted (R times, a seeded generator,
// so results repeat), the largest Q of the permuted series found the same
// way, and the p-value is (1 + #{permuted ≥ observed}) / (R + 1). A
// significant candidate becomes a change point and the search goes on in
// the segments it creates; the first candidate that is not significant
// ends it.
//
// Here the end of each candidate split is the end of its segment (the
// paper also maximises over that end, κ), which keeps a scan O(n²) with
// running sums; each side must hold at least MinSize values, so one
// outlier cannot make a segment of its own. A permutation test stops as
// soon as its candidate cannot be significant; a year of nightly medians
// with one step takes about 0.8 s (BenchmarkDetect, on a shared 2-core VM).
//
// # References
//
//   - D. S. Matteson and N. A. James, "A Nonparametric Approach for Multiple
//     Change Point Analysis of Multivariate Data", Journal of the American
//     Statistical Association 109(505):334–345, 2014.
//     https://doi.org/10.1080/01621459.2013.849605
//   - D. Daly, W. Brown, H. Ingo, J. O'Leary and D. Bradford, "The Use of
//     Change Point Detection to Identify Software Performance Regressions
//     in a Continuous Integration System", ICPE 2020.
//     https://doi.org/10.1145/3358960.3375791
//   - M. Fleming et al., "Hunter: Using Change Point Detection to Hunt for
//     Performance Regressions", ICPE 2023 (Hunter, the tool built on the
//     same method).
package changepoint
