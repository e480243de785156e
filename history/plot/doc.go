// Package plot draws a benchmark history: for each metric one PNG (gonum/plot)
// with a line per configuration across the runs, each point the run's
// median with a bar over its repetitions' range and the change points
// marked, and an HTML page showing them with a table of the series and
// their change points. It draws trend series; it reads no files.
package plot
