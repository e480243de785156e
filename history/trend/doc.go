// Package trend reads a benchmark history as series, one per backend,
// configuration and metric, with a point per run in the order the runs
// started (each point the run's repetitions, their median and range), and
// finds where the series changed: history/changepoint on the points'
// medians, the series judged as one family (its false discovery rate
// held), each change with the medians before and after and the direction.
//
// It knows the store's rows, not results documents or SQLite.
package trend
