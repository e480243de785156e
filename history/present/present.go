// Package present is the history commands' terminal output, in one place:
// what add and remove say of each document or run, the warning naming a
// stored figure that show and changes leave out, and the change points of
// changes as a table or as JSON (show's list of files is
// results.PrintWritten, every command's). The commands' wiring
// (cmd/provebench) hands it what the store and trend returned and prints
// nothing of its own. The change table's values are written by the metric
// table's unit (results.Unit.Format), as every other table writes them; a
// metric this provebench does not know (the history keeps its rows) to
// four significant figures.
package present

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/provebench/provebench/history/changepoint"
	"github.com/provebench/provebench/history/ingest"
	"github.com/provebench/provebench/history/store"
	"github.com/provebench/provebench/history/trend"
)

// Added writes add's line for one document: its run (or, for a merged
// document, its commit and how many shards' runs) and what was stored.
func Added(w io.Writer, d ingest.Document, added store.Added) {
	state := fmt.Sprintf("added %d values", added.Samples)
	switch {
	case added.Samples == 0:
		state = "already there"
	case added.Known > 0:
		state += fmt.Sprintf(" (%d already there)", added.Known)
	}
	runs := d.Entries[0].Run.String()
	if len(d.Entries) > 1 {
		runs = fmt.Sprintf("commit %s, %d runs (its shards')", ShortCommit(d.Entries[0].Run.Commit), len(d.Entries))
	}
	fmt.Fprintf(w, "%s: %s: %s\n", d.Source, runs, state)
}

// Removed writes remove's line for each run it took out.
func Removed(w io.Writer, removed []store.Removed) {
	for _, r := range removed {
		fmt.Fprintf(w, "removed %s (added from %s): %d values\n", r.Run, r.Source, r.Samples)
	}
}

// Runs writes how many runs the history file holds, add's and remove's
// last line.
func Runs(w io.Writer, db string, n int) {
	fmt.Fprintf(w, "%s: %d runs\n", db, n)
}

// Outside warns, once a run, which stored figures were left out (at most
// three named, then how many more) and how to take the run out.
func Outside(w io.Writer, outside []ingest.Outside) {
	var runs []store.Run
	byRun := map[store.Run][]string{}
	for _, o := range outside {
		if _, ok := byRun[o.Run]; !ok {
			runs = append(runs, o.Run)
		}
		byRun[o.Run] = append(byRun[o.Run], fmt.Sprintf("%s repetition %d: %v", o.Configuration, o.Repetition, o.Err))
	}
	for _, r := range runs {
		figs := byRun[r]
		more := ""
		if len(figs) > 3 {
			more = fmt.Sprintf("; and %d more", len(figs)-3)
			figs = figs[:3]
		}
		fmt.Fprintf(w, "warning: run %s (added from %s): left out %s%s (provebench history remove --commit %s takes the run out)\n",
			r, r.Source, strings.Join(figs, "; "), more, ShortCommit(r.Commit))
	}
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
	Test           string    `json:"test"`
	Regression     bool      `json:"regression"`
	Runs           int       `json:"runs"`
}

// Changes writes the change points of rep, judged at the false discovery
// rate fdr, as format: "json" an indented array of objects, otherwise a
// table with a last line counting them and saying what was judged.
func Changes(w io.Writer, format string, rep trend.Report, fdr float64) error {
	if format == "json" {
		out := make([]changeJSON, 0, len(rep.Changes))
		for _, c := range rep.Changes {
			out = append(out, changeJSON{c.Configuration, c.Backend, c.Metric, c.Commit, c.PreviousCommit, c.Time.UTC(),
				c.Before, c.After, c.Percent, c.PValue, c.Test.String(), c.Regression, c.Runs})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	family := fmt.Sprintf("%d series judged at a false discovery rate of %g", rep.Judged, fdr)
	if short := rep.Series - rep.Judged; short > 0 {
		family += fmt.Sprintf("; %d with fewer than %d runs not judged", short, 2*changepoint.DefaultMinSize)
	}
	if len(rep.Changes) == 0 {
		_, err := fmt.Fprintf(w, "no change point (%s)\n", family)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "configuration\tmetric\tsince (UTC)\tcommit\tbefore -> after\tchange\tp-value\ttest\t")
	for _, c := range rep.Changes {
		value := func(v float64) string { return fmt.Sprintf("%.4g", v) }
		if m, ok := ingest.Lookup(c.Metric); ok {
			value = m.Unit.Format
		}
		verdict := "improvement"
		if c.Regression {
			verdict = "regression"
		}
		// The date beside the commit: a nightly's reader asks "which night?"
		// first, and a commit alone does not say.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s -> %s\t%+.1f%% (%s)\t%.3g\t%s\t\n", c.Configuration, c.Metric, c.Time.UTC().Format("2006-01-02 15:04"), ShortCommit(c.Commit),
			value(c.Before), value(c.After), c.Percent, verdict, c.PValue, c.Test)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d change points (%s)\n", len(rep.Changes), family)
	return err
}

// ShortCommit is a commit as the history prints it: its first 12
// characters.
func ShortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
