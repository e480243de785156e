// Package changepoint finds the points where a series' distribution
// changes: E-Divisive with means, the hierarchical energy-statistic method
// of Matteson and James, with a permutation test deciding whether each
// split is significant; a Gaussian likelihood-ratio test for series too
// short for permutations to decide; and the false discovery rate of a
// family of series held with Benjamini-Hochberg.
//
// It knows nothing of where the series come from: give it the values in
// order (one per commit, say) and it returns the indices where a new
// regime starts, each with its test's p-value.
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
// default, which tempers outliers). The best split of a segment
// maximises Q. Starting from the whole series, the candidate with the
// largest Q over all current segments is tested: the values of each
// segment are permuted, the largest Q of the permuted series found the
// same way, and the p-value is the share of permuted series reaching the
// observed Q. A significant candidate becomes a change point and the
// search goes on in the segments it creates; the first candidate that is
// not significant ends it.
//
// Here the end of each candidate split is the end of its segment (the
// paper also maximises over that end, κ), which keeps a scan O(n²) with
// running sums; each side must hold at least MinSize values, so one
// outlier cannot make a segment of its own. A permuted series is the
// distance matrix read through the permutation: no distance is computed
// again.
//
// # P-values: sequential, seeded
//
// Null series are drawn (seeded, so that a series gives the same answer
// every time) until 10 of them reach the observed statistic, p = 10/drawn,
// or until Draws are drawn, p = (1 + reached)/(1 + Draws): Besag and
// Clifford's sequential Monte Carlo p-value, valid (P(p <= u) <= u under
// the null), precise where it is small and cheap where it is not: a flat
// series stops after a few dozen draws. A test also stops once its
// p-value is certain to fall on one side of the level it is judged at
// (family.go): a family whose series all changed costs about 10/q draws
// a series, not Draws, with the same change points; Draws (at most
// MaxDraws: a rate too small for the family is refused) is reached only
// by a test whose side of the level stays open.
//
// # Young series: the Gaussian test
//
// Permutations of n values cannot give a p-value below 2/C(n, s) for a
// change s values from an end (the sorted order and its mirror): 0.1 for
// 6 values split 3 and 3, 0.0091 for 12. A series shorter than
// PermutationFrom (the first n at which 2/C(n, MinSize) is at most half
// the family's first bound, q/(2m)) is judged instead by the likelihood
// ratio test of a shift in the mean of Gaussian values with unknown
// variance (Worsley 1979): the largest two-sample t² over the splits, its
// null drawn as standard normal series (t² does not move when a segment
// is shifted or scaled). It assumes Gaussian noise around each regime;
// one outlying run weighs little (it inflates its side's spread), but a
// run of them can read as a change. A step between two noise-free regimes
// has t² +Inf and the smallest p-value the draws allow.
//
// # Families: the false discovery rate
//
// A nightly history tests every series of every configuration: at
// p <= 0.01 each, one flat series in a hundred would raise an alarm every
// night. DetectFamily holds the false discovery rate (the expected share
// of false ones among the change points reported) at q (FDR, 0.01 by
// default) over the series it is given (Benjamini and Hochberg 1995): the
// best split of every series is tested; with the p-values sorted, the k
// smallest are kept for the largest k with p_(k) <= q·k/m; within each
// kept series further change points are sought at that level, q·k/m
// (Benjamini and Bogomolov's selective inference over families). When no
// series changed, a family reports any change point with probability at
// most q, however many series it holds. Draws grows with the family
// (10m/q) so that the smallest bound, q/m, can be reached.
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
//   - J. Besag and P. Clifford, "Sequential Monte Carlo p-values",
//     Biometrika 78(2):301–304, 1991.
//   - K. J. Worsley, "On the Likelihood Ratio Test for a Shift in Location
//     of Normal Populations", JASA 74(366):365–367, 1979.
//   - Y. Benjamini and Y. Hochberg, "Controlling the False Discovery Rate:
//     a Practical and Powerful Approach to Multiple Testing", JRSS B
//     57(1):289–300, 1995.
//   - Y. Benjamini and M. Bogomolov, "Selective inference on multiple
//     families of hypotheses", JRSS B 76(1):297–318, 2014.
package changepoint
