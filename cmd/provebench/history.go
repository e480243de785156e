package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/history/changepoint"
	"github.com/provebench/provebench/history/ingest"
	"github.com/provebench/provebench/history/plot"
	"github.com/provebench/provebench/history/store"
	"github.com/provebench/provebench/history/trend"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

func newHistoryCmd() *cobra.Command {
	var db string
	c := &cobra.Command{
		Use:   "history",
		Short: "Keep results across commits and find the commit where a figure moved",
		Long: `history keeps the measured repetitions of results documents in one SQLite
file (no server), keyed by the git commit the binary was built from, the
run's start, the host, the backend, the configuration and the metric, and
reads them back as series across commits:

  history add RESULTS...       store documents (files or run output folders)
  history show -o DIR          one PNG per metric across runs, and history.html
  history changes              change points: E-Divisive means with a
                               permutation test (Matteson & James 2014, as in
                               MongoDB's performance CI, Daly et al. ICPE 2020)

The file is --db, by default history.db in the key cache folder
(` + store.DefaultPath(groth16.DefaultCacheDir()) + `; $PROVEBENCH_CACHE moves it).
Metrics: ` + metricNames() + `.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.PersistentFlags().StringVar(&db, "db", store.DefaultPath(groth16.DefaultCacheDir()), "the history file (SQLite; created when absent)")
	c.AddCommand(newHistoryAddCmd(&db), newHistoryShowCmd(&db), newHistoryChangesCmd(&db))
	return c
}

func metricNames() string {
	var names []string
	for _, m := range ingest.Metrics {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

func newHistoryAddCmd(db *string) *cobra.Command {
	return &cobra.Command{
		Use:   "add RESULTS...",
		Short: "Add results documents to the history",
		Long: `add stores each results document (results.json.gz or results.json, or an
output folder holding one) in the history: every measured repetition's
figures, keyed by the document's git commit, start time and host. A document
already there (same commit, time and host) is skipped, so adding the same
file twice is harmless. Every document is read and checked before anything
is stored, and each is stored in one transaction: all of it or none.

Exit status: 0 added (or already there), 2 bad input (a file that is not a
results document, one without a git commit, a simulated one), 1 the history
file could not be written.`,
		Example: `  provebench history add out/nightly
  provebench history add --db history.db runs/*/results.json.gz`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistoryAdd(cmd.Context(), cmd.OutOrStdout(), *db, args)
		},
	}
}

func runHistoryAdd(ctx context.Context, w io.Writer, db string, args []string) error {
	var docs []ingest.Document
	for _, a := range args {
		p := a
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			if p, err = results.Find(a); err != nil {
				return usageError{err}
			}
		}
		doc, err := results.ReadContext(ctx, p)
		if err != nil {
			return usageError{err}
		}
		d, err := ingest.FromRun(doc, p)
		if err != nil {
			return usageError{err}
		}
		docs = append(docs, d)
	}
	s, err := store.Open(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, d := range docs {
		added, err := s.Add(ctx, d.Run, d.Samples)
		if err != nil {
			return err
		}
		state := fmt.Sprintf("added %d values", len(d.Samples))
		if !added {
			state = "already there"
		}
		fmt.Fprintf(w, "%s: commit %s, %s, %s: %s\n", d.Run.Source, shortCommit(d.Run.Commit), d.Run.Time.UTC().Format(time.RFC3339), d.Run.Host, state)
	}
	n, err := s.Runs(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d runs\n", db, n)
	return nil
}

// historyQuery is what show and changes select.
type historyQuery struct {
	metric, configuration string
}

func (q *historyQuery) register(c *cobra.Command) {
	c.Flags().StringVar(&q.metric, "metric", "", "only this metric (default: all): "+metricNames())
	c.Flags().StringVar(&q.configuration, "configuration", "", "only configurations whose name matches this regular expression")
}

// series reads the selected series of the history file, which must exist.
func (q *historyQuery) series(ctx context.Context, db string) ([]trend.Series, error) {
	if q.metric != "" {
		if _, ok := ingest.Lookup(q.metric); !ok {
			return nil, usagef("--metric %q: want one of %s", q.metric, metricNames())
		}
	}
	var re *regexp.Regexp
	if q.configuration != "" {
		var err error
		if re, err = regexp.Compile(q.configuration); err != nil {
			return nil, usagef("--configuration: %v", err)
		}
	}
	if _, err := os.Stat(db); err != nil {
		return nil, usagef("--db: %v (add results first: provebench history add)", err)
	}
	s, err := store.Open(ctx, db)
	if err != nil {
		return nil, usageError{err}
	}
	defer s.Close()
	rows, err := s.Rows(ctx, store.Filter{Metric: q.metric})
	if err != nil {
		return nil, err
	}
	return trend.Select(trend.FromRows(rows), re), nil
}

func newHistoryShowCmd(db *string) *cobra.Command {
	var q historyQuery
	var out string
	c := &cobra.Command{
		Use:   "show -o DIR",
		Short: "Draw each metric across the runs of the history",
		Long: `show draws, into DIR, one PNG per metric with a line per configuration across
the runs (oldest first, ticks naming the commits), each point the run's median
over its measured repetitions with a bar over their range, and the change
points (as history changes finds them) dashed; and history.html showing the
pictures with a table of the series and their change points.`,
		Example: `  provebench history show -o out/history
  provebench history show --metric peak_rss_bytes --configuration '^hold' -o out/rss`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out: an output directory is required")
			}
			series, err := q.series(cmd.Context(), *db)
			if err != nil {
				return err
			}
			if len(series) == 0 {
				return usagef("%s: no series match", *db)
			}
			figs, err := historyFigures(series)
			if err != nil {
				return err
			}
			files, err := plot.Write(out, "provebench history", figs)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "wrote:")
			for _, f := range files {
				fmt.Fprintln(cmd.OutOrStdout(), "  "+f)
			}
			return nil
		},
	}
	q.register(c)
	c.Flags().StringVarP(&out, "out", "o", "", "output directory (required)")
	return c
}

// historyFigures groups series by metric, in the order of ingest.Metrics,
// with their change points.
func historyFigures(series []trend.Series) ([]plot.Figure, error) {
	changes, err := trend.Changes(series, changeOptions(changepoint.Options{}, 0))
	if err != nil {
		return nil, err
	}
	byKey := map[trend.Key][]trend.Change{}
	for _, c := range changes {
		byKey[c.Key] = append(byKey[c.Key], c)
	}
	var figs []plot.Figure
	for _, m := range ingest.Metrics {
		f := plot.Figure{Metric: m.Name, Unit: m.Unit, Changes: byKey}
		for _, s := range series {
			if s.Metric == m.Name {
				f.Series = append(f.Series, s)
			}
		}
		if len(f.Series) > 0 {
			figs = append(figs, f)
		}
	}
	return figs, nil
}

func changeOptions(o changepoint.Options, recent int) trend.Options {
	return trend.Options{
		Options: o,
		Recent:  recent,
		HigherIsBetter: func(metric string) bool {
			m, _ := ingest.Lookup(metric)
			return m.HigherIsBetter
		},
	}
}

func newHistoryChangesCmd(db *string) *cobra.Command {
	var q historyQuery
	var format string
	var recent int
	var o changepoint.Options
	c := &cobra.Command{
		Use:   "changes",
		Short: "Find the commits where a metric changed",
		Long: `changes looks for change points in every series of the history (a backend,
configuration and metric across runs, in the order the runs started; each
run's value is the median of its measured repetitions): E-Divisive with means
(Matteson and James, JASA 2014), the method MongoDB's performance CI uses
(Daly et al., ICPE 2020) and Hunter after it, with a permutation test (999
permutations, seeded: the same history gives the same answer). A split is a
change point when its p-value is at most --significance (0.01); each side of
it holds at least 3 runs, so a change is found from its third run on.

For each change point it prints the configuration, the metric, the first
commit after the change, the medians before -> after (each over the runs
between the neighbouring change points), the change in percent and the
p-value; --format json prints an array of objects with configuration,
backend, metric, commit, previous_commit, time, before, after,
change_percent, p_value, regression and runs.

--recent N keeps the change points among the last N runs of their series: a
nightly job's "what is new" (a change stays among the last 5 runs for 3
nights after it is first found).

Exit status: 0 no change point, or only improvements; 3 a change point in the
worse direction of its metric (higher time, memory or energy, lower
throughput); 2 bad input (no history file, an unknown metric, a bad
expression); 1 the history could not be read.`,
		Example: `  provebench history changes
  provebench history changes --metric peak_rss_bytes --format json
  provebench history changes --recent 5    # in a nightly job`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return usagef("--format %q: want text or json", format)
			}
			if recent < 0 {
				return usagef("--recent %d: want 0 (all) or more", recent)
			}
			if !(o.Significance > 0 && o.Significance < 1) {
				return usagef("--significance %g: want 0 < p < 1", o.Significance)
			}
			series, err := q.series(cmd.Context(), *db)
			if err != nil {
				return err
			}
			changes, err := trend.Changes(series, changeOptions(o, recent))
			if err != nil {
				return err
			}
			if err := printChanges(cmd.OutOrStdout(), format, changes, len(series)); err != nil {
				return err
			}
			if slices.ContainsFunc(changes, func(c trend.Change) bool { return c.Regression }) {
				return exitError{code: exitRegression, err: errors.New("")}
			}
			return nil
		},
	}
	q.register(c)
	c.Flags().StringVar(&format, "format", "text", "text or json")
	c.Flags().IntVar(&recent, "recent", 0, "only change points among the last N runs of their series (0: all)")
	c.Flags().Float64Var(&o.Significance, "significance", changepoint.DefaultSignificance, "the largest p-value of a change point")
	return c
}

// changeJSON is one change point in --format json.
type changeJSON struct {
	Configuration  string    `json:"configuration"`
	Backend        string    `json:"backend"`
	Metric         string    `json:"metric"`
	Commit         string    `json:"commit"`
	PreviousCommit string    `json:"previous_commit"`
	Time           time.Time `json:"time"`
	Before         float64   `json:"before"`
	After          float64   `json:"after"`
	ChangePercent  float64   `json:"change_percent"`
	PValue         float64   `json:"p_value"`
	Regression     bool      `json:"regression"`
	Runs           int       `json:"runs"`
}

func printChanges(w io.Writer, format string, changes []trend.Change, series int) error {
	if format == "json" {
		out := make([]changeJSON, 0, len(changes))
		for _, c := range changes {
			out = append(out, changeJSON{c.Configuration, c.Backend, c.Metric, c.Commit, c.PreviousCommit, c.Time.UTC(),
				c.Before, c.After, c.Percent, c.PValue, c.Regression, c.Runs})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(changes) == 0 {
		_, err := fmt.Fprintf(w, "no change point in %d series\n", series)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "configuration\tmetric\tcommit\tbefore -> after\tchange\tp-value\t")
	for _, c := range changes {
		m, _ := ingest.Lookup(c.Metric)
		verdict := "improvement"
		if c.Regression {
			verdict = "regression"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s -> %s\t%+.1f%% (%s)\t%.3g\t\n", c.Configuration, c.Metric, shortCommit(c.Commit),
			formatValue(c.Before, m.Unit), formatValue(c.After, m.Unit), c.Percent, verdict, c.PValue)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d change points in %d series\n", len(changes), series)
	return err
}

func formatValue(v float64, unit string) string {
	if unit == "B" {
		return units.FormatBytes(int64(v))
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
