package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/history/changepoint"
	"github.com/provebench/provebench/history/ingest"
	"github.com/provebench/provebench/history/plot"
	"github.com/provebench/provebench/history/present"
	"github.com/provebench/provebench/history/store"
	"github.com/provebench/provebench/history/trend"
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
                               MongoDB's performance CI, Daly et al. ICPE 2020),
                               the false discovery rate held over the series
  history remove RESULTS...    take runs out again (or --commit C)

show and changes only read the file: they open it read-only, write nothing
beside it (a read-only mount will do) and wait for a writer only while it
commits.

The file is --db, by default history.db in the key cache folder
(` + store.DefaultPath(groth16.DefaultCacheDir()) + `; $PROVEBENCH_CACHE moves it).
Metrics: ` + metricNames() + `.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.PersistentFlags().StringVar(&db, "db", store.DefaultPath(groth16.DefaultCacheDir()), "the history file (SQLite; add creates it when absent)")
	c.AddCommand(newHistoryAddCmd(&db), newHistoryShowCmd(&db), newHistoryChangesCmd(&db), newHistoryRemoveCmd(&db))
	return c
}

func metricNames() string {
	var names []string
	for _, m := range ingest.Metrics() {
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
figures, keyed by the document's git commit, start time and host. A merged
document (provebench merge) is its shards' runs, each with the shard's start
and host: adding a merged document and its shards, in any order, stores each
repetition once. A repetition already there is skipped, so adding the same
file twice is harmless; one already there with another value is refused.

Every document is read and checked before anything is stored: refused are
files that are not results documents, documents without a git commit or a
start time, simulated ones, a repetition index twice in a configuration, and
a figure outside its metric's bounds (at least 0; at most 1e7 s, 1 EiB,
1e9 partitions/s, 1e12 J), each named with its document, configuration and
repetition. A configuration whose settings (workload, pipeline, backend,
key, clock; not its repeats or sampling) differ from those its series was
first stored with is refused too: a scenario changed under the same name
would continue another scenario's series. Name the changed scenario anew.
Each document is stored in one transaction: all of it or none.
The history file is created when absent; an existing file must be a history.

Exit status: 0 added (or already there), 2 bad input (a document refused, a
--db that is not a history file), 1 the history file could not be written.`,
		Example: `  provebench history add out/nightly
  provebench history add --db history.db runs/*/results.json.gz`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistoryAdd(cmd.Context(), cmd.OutOrStdout(), *db, args)
		},
	}
}

// readDocuments finds the results document of each argument (a file, or
// an output folder holding one) and reads it with read.
func readDocuments[T any](ctx context.Context, args []string, read func(ctx context.Context, path string) (T, error)) ([]T, error) {
	var out []T
	for _, a := range args {
		p, err := results.InDir(a)
		if err != nil {
			return nil, usageError{err}
		}
		d, err := read(ctx, p)
		if err != nil {
			return nil, usageError{err}
		}
		out = append(out, d)
	}
	return out, nil
}

func runHistoryAdd(ctx context.Context, w io.Writer, db string, args []string) (err error) {
	docs, err := readDocuments(ctx, args, func(ctx context.Context, p string) (ingest.Document, error) {
		doc, err := results.ReadContext(ctx, p)
		if err != nil {
			return ingest.Document{}, err
		}
		return ingest.FromRun(doc, p)
	})
	if err != nil {
		return err
	}
	_, statErr := os.Stat(db)
	created := errors.Is(statErr, fs.ErrNotExist)
	s, err := openHistory(ctx, db, false)
	if err != nil {
		return err
	}
	defer s.Close()
	stored := 0
	defer func() {
		// A history this add created and stored nothing in is not left
		// behind for a reader to mistake for one.
		if err != nil && created && stored == 0 {
			s.Close()
			os.Remove(db)
		}
	}()
	for _, d := range docs {
		added, err := s.Add(ctx, d.Entries)
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrScenarioChanged) {
			return usagef("%s: %w", d.Source, err)
		}
		if err != nil {
			return err
		}
		stored += added.Samples
		present.Added(w, d, added)
	}
	n, err := s.Runs(ctx)
	if err != nil {
		return err
	}
	present.Runs(w, db, n)
	return nil
}

// openHistory opens the history file for reading (which must exist) or
// writing (created when absent); a file that is not a history is bad
// input.
func openHistory(ctx context.Context, db string, readOnly bool) (*store.Store, error) {
	open := store.Open
	if readOnly {
		open = store.OpenReadOnly
	}
	s, err := open(ctx, db)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, usagef("--db %s: no such file (add results first: provebench history add)", db)
	case errors.Is(err, store.ErrNotHistory):
		return nil, usageError{err}
	case err != nil:
		return nil, err
	}
	return s, nil
}

func newHistoryRemoveCmd(db *string) *cobra.Command {
	var commit string
	c := &cobra.Command{
		Use:   "remove RESULTS... | --commit C",
		Short: "Take runs out of the history",
		Long: `remove takes runs out of the history with every figure of theirs, in one
transaction: the runs of each results document given (files or output
folders; a merged document's shards' runs), or with --commit every run of a
commit (in full, or a prefix naming one commit of the history). It lists what
it removed. Use it for a run that should not count: a broken host, a run
measured under load, a document refused now that was added before add
checked the figures' bounds (show and changes leave such figures out, with
a warning naming the run).

Exit status: 0 removed, 2 bad input (nothing of the kind in the history, an
ambiguous commit prefix, no history file), 1 the history could not be
written.`,
		Example: `  provebench history remove out/nightly
  provebench history remove --commit 0a277a8bb778`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (commit == "") == (len(args) == 0) {
				return usagef("give results documents or --commit, one of the two")
			}
			var keys []store.Run
			if len(args) > 0 {
				docs, err := readDocuments(cmd.Context(), args, func(ctx context.Context, p string) ([]store.Run, error) {
					doc, err := results.ReadContext(ctx, p)
					if err != nil {
						return nil, err
					}
					return ingest.Keys(doc, p)
				})
				if err != nil {
					return err
				}
				for _, d := range docs {
					keys = append(keys, d...)
				}
			}
			if _, err := os.Stat(*db); err != nil {
				return usagef("--db %s: %v", *db, err)
			}
			s, err := openHistory(cmd.Context(), *db, false)
			if err != nil {
				return err
			}
			defer s.Close()
			var removed []store.Removed
			what := "the runs of " + strings.Join(args, ", ")
			if commit != "" {
				removed, err = s.RemoveCommit(cmd.Context(), commit)
				what = "a run of commit " + commit
			} else {
				removed, err = s.RemoveRuns(cmd.Context(), keys)
			}
			if errors.Is(err, store.ErrAmbiguous) {
				return usagef("--commit: %w", err)
			}
			if err != nil {
				return err
			}
			if len(removed) == 0 {
				return usagef("%s: no %s to remove", *db, what)
			}
			present.Removed(cmd.OutOrStdout(), removed)
			n, err := s.Runs(cmd.Context())
			if err != nil {
				return err
			}
			present.Runs(cmd.OutOrStdout(), *db, n)
			return nil
		},
	}
	c.Flags().StringVar(&commit, "commit", "", "remove every run of this commit (a prefix naming one will do)")
	return c
}

// historyQuery is what show and changes select.
type historyQuery struct {
	metric, configuration string
}

func (q *historyQuery) register(c *cobra.Command) {
	c.Flags().StringVar(&q.metric, "metric", "", "only this metric (default: all): "+metricNames())
	c.Flags().StringVar(&q.configuration, "configuration", "", "only configurations whose name matches this regular expression")
}

// series reads the selected series of the history file, which must exist
// and hold some. A stored figure outside its metric's bounds (a history
// from before add checked them) is left out, with a warning to w naming
// its run.
func (q *historyQuery) series(ctx context.Context, w io.Writer, db string) ([]trend.Series, error) {
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
	s, err := openHistory(ctx, db, true)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rows, err := s.Rows(ctx, store.Filter{Metric: q.metric})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		if n, err := s.Runs(ctx); err == nil && n == 0 {
			return nil, usagef("%s: the history holds no runs (add results first: provebench history add)", db)
		}
		return nil, usagef("%s: no run measured %s (metrics of the history: %s)", db, q.metric, strings.Join(historyMetrics(ctx, s), ", "))
	}
	kept, outside := ingest.Sane(rows)
	present.Outside(w, outside)
	all := trend.FromRows(kept)
	series := trend.Select(all, re)
	if len(series) == 0 {
		var configs []string
		for _, s := range all {
			if !slices.Contains(configs, s.Configuration) {
				configs = append(configs, s.Configuration)
			}
		}
		slices.Sort(configs)
		return nil, usagef("%s: no series matches --configuration %q (configurations: %s)", db, q.configuration, strings.Join(configs, ", "))
	}
	return series, nil
}

// historyMetrics are the metrics the history holds.
func historyMetrics(ctx context.Context, s *store.Store) []string {
	rows, _ := s.Rows(ctx, store.Filter{})
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.Metric) {
			out = append(out, r.Metric)
		}
	}
	slices.Sort(out)
	return out
}

func newHistoryShowCmd(db *string) *cobra.Command {
	var q historyQuery
	var out string
	c := &cobra.Command{
		Use:   "show -o DIR",
		Short: "Draw each metric across the runs of the history",
		Long: `show draws, into DIR, one PNG per metric with a panel per configuration
(small multiples, each its own value axis) on one time axis, each run at its
start, each point the run's median over its measured repetitions with a bar
over their range, and the change
points (as history changes finds them, the selected series one family) dashed;
and history.html showing the pictures with a table of the series and their
change points. It opens the history read-only.

Exit status: 0 drawn; 2 bad input (no history file, a file that is not a
history, an unknown metric, a bad expression, a selection that matches no
series); 1 the history could not be read or the pictures written.`,
		Example: `  provebench history show -o out/history
  provebench history show --metric peak_rss_bytes --configuration '^hold' -o out/rss`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out: an output directory is required")
			}
			if st, err := os.Stat(out); err == nil && !st.IsDir() {
				return usagef("-o %s: not a directory", out)
			}
			series, err := q.series(cmd.Context(), cmd.ErrOrStderr(), *db)
			if err != nil {
				return err
			}
			figs, err := historyFigures(cmd.Context(), series)
			if err != nil {
				return err
			}
			files, err := plot.Write(out, "provebench history", figs)
			if err != nil {
				return err
			}
			results.PrintWritten(cmd.OutOrStdout(), files)
			return nil
		},
	}
	q.register(c)
	c.Flags().StringVarP(&out, "out", "o", "", "output directory (required)")
	return c
}

// historyFigures groups series by metric, in the order of ingest.Metrics,
// with their change points.
func historyFigures(ctx context.Context, series []trend.Series) ([]plot.Figure, error) {
	rep, err := trend.Changes(ctx, series, changeOptions(changepoint.Options{}, 0))
	if err != nil {
		return nil, err
	}
	byKey := map[trend.Key][]trend.Change{}
	for _, c := range rep.Changes {
		byKey[c.Key] = append(byKey[c.Key], c)
	}
	var figs []plot.Figure
	for _, m := range ingest.Metrics() {
		f := plot.Figure{Metric: m.Name, Unit: string(m.Unit), Changes: byKey}
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
			return m.Better == results.HigherIsBetter
		},
	}
}

// historyChangesHelp is history changes' long help.
const historyChangesHelp = `changes looks for change points in every series of the history (a backend,
configuration and metric across runs, in the order the runs started; each
run's value is the median of its measured repetitions): E-Divisive with means
(Matteson and James, JASA 2014), the method MongoDB's performance CI uses
(Daly et al., ICPE 2020) and Hunter after it, with a permutation test (seeded:
the same history gives the same answer).

The series are judged as one family: the false discovery rate (the expected
share of false ones among the change points reported) is held at --fdr
(0.01) with Benjamini-Hochberg, so a night in which nothing changed reports
a change point with probability at most 1%, however many configurations and
metrics the history holds. The family is the series selected (--metric,
--configuration): a smaller family asks less of each series.

Each side of a split holds at least 3 runs: a change is judged from its
third run on, and a series of fewer than 6 runs is not judged. A series too
short for permutations of its runs to give the evidence the family asks for
(fewer than 15 runs alone, 42 in a family of 28 series) is judged by a
Gaussian test instead (the largest two-sample t over the splits, Worsley
1979), which assumes Gaussian noise around each level.

For each change point it prints the configuration, the metric, the first
commit after the change, the medians before -> after (each over the runs
between the neighbouring change points), the change in percent, the p-value
and the test; --format json prints an array of objects with configuration,
backend, metric, commit, previous_commit, time, before, after,
change_percent, p_value, test, regression and runs.

--recent N keeps the change points among the last N runs of their series: a
nightly job's "what is new" (with 5, a change is reported on its 3rd, 4th
and 5th night).

Exit status: 0 no change point, or only improvements; 3 a change point in the
worse direction of its metric (higher time, memory or energy, lower
throughput); 4 no series could be judged yet (every one has fewer than 6
runs); 2 bad input (no history file, a file that is not a history, an
unknown metric, a bad expression, a selection that matches no series); 1
the history could not be read.`

func newHistoryChangesCmd(db *string) *cobra.Command {
	var q historyQuery
	var format string
	var recent int
	var o changepoint.Options
	c := &cobra.Command{
		Use:   "changes",
		Short: "Find the commits where a metric changed",
		Long:  historyChangesHelp,
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
			if !(o.FDR > 0 && o.FDR < 1) {
				return usagef("--fdr %g: want 0 < q < 1", o.FDR)
			}
			if err := changepoint.CheckDraws(1, o.FDR); err != nil {
				return usagef("--fdr: %v", err)
			}
			series, err := q.series(cmd.Context(), cmd.ErrOrStderr(), *db)
			if err != nil {
				return err
			}
			rep, err := trend.Changes(cmd.Context(), series, changeOptions(o, recent))
			if errors.Is(err, changepoint.ErrFDRTooSmall) {
				return usagef("--fdr: %v (or select fewer series with --metric, --configuration)", err)
			}
			if err != nil {
				return err
			}
			if err := present.Changes(cmd.OutOrStdout(), format, rep, o.FDR); err != nil {
				return err
			}
			if slices.ContainsFunc(rep.Changes, func(c trend.Change) bool { return c.Regression }) {
				return exitError{code: exitRegression, err: errors.New("")}
			}
			if rep.Judged == 0 {
				return exitError{code: exitInconclusive, err: fmt.Errorf("not judged: each of the %d series has fewer than %d runs", rep.Series, 2*changepoint.DefaultMinSize)}
			}
			return nil
		},
	}
	q.register(c)
	c.Flags().StringVar(&format, "format", "text", "text or json")
	c.Flags().IntVar(&recent, "recent", 0, "only change points among the last N runs of their series (0: all)")
	c.Flags().Float64Var(&o.FDR, "fdr", changepoint.DefaultFDR, "the false discovery rate held over the series judged (Benjamini-Hochberg)")
	return c
}
