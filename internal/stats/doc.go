// Package stats holds the order statistics every summary in provebench is
// made of: one median and one percentile, so that a report, a comparison,
// the simulator's fit and a results document all mean the same figure by
// the same word.
//
// Intervals and tests of significance are not here: they come from
// golang.org/x/perf/benchmath (compare), whose AssumeNothing summary
// centres on the same median (its R8 quantile at 0.5 is the mean of the two
// middle values, to within one rounding).
package stats
