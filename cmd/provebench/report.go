package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/bench/compare"
	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/reports"
)

// generateReport writes the report and plots of a run into dir.
func generateReport(doc *results.Run, dir string) ([]string, error) {
	return reports.Generate(doc, dir, reports.Options{})
}

func newReportCmd() *cobra.Command {
	var out, title string
	var formats []string
	c := &cobra.Command{
		Use:   "report RESULTS",
		Short: "Turn a results document into plots, report.md and report.html",
		Long: `report reads a results.json written by run and writes, into the output
directory: throughput against peak memory (one point per configuration, spread
from the repeats, the Pareto front), a timeline per configuration (RSS, GPU
memory and the buffer counters on one time axis), a comparison of strategies,
report.md with the tables and report.html embedding the plots.`,
		Example: "  provebench report out/run/results.json -o out/run",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, err := results.Read(args[0])
			if err != nil {
				return usageError{err}
			}
			if len(doc.Scenarios) == 0 {
				return usagef("%s: an empty shard has nothing to report: merge it with the other shards (provebench merge)", args[0])
			}
			if out == "" {
				return usagef("--out: an output directory is required")
			}
			for _, f := range formats {
				if f != "png" && f != "svg" {
					return usagef("--format: %q is not png or svg", f)
				}
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return usagef("--out: %v", err)
			}
			files, err := reports.Generate(doc, out, reports.Options{Formats: formats, Title: title})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintln(w, "wrote:")
			for _, f := range files {
				fmt.Fprintln(w, "  "+f)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "output directory (required)")
	c.Flags().StringVar(&title, "title", "", "report title (default from the run)")
	c.Flags().StringSliceVar(&formats, "format", nil, "plot formats: png, svg (default both)")
	return c
}

func newCompareCmd() *cobra.Command {
	var thresholds, markdown string
	var alpha float64
	c := &cobra.Command{
		Use:   "compare BASE NEW",
		Short: "Compare two runs and fail on a regression",
		Long: `compare reads two results documents and, per configuration and metric, reports
the change of the median with its significance (Mann-Whitney U over the
repeats); exact figures (failed repetitions, counters left non-zero, counter
peaks that repeat exactly) are compared directly. A regression is a change that
is significant and beyond the metric's threshold in the bad direction.

The Markdown report is appended to $GITHUB_STEP_SUMMARY when that is set.

Exit status: 0 no regression, 3 regression, 2 bad or mismatched input
(including a new run that lacks some of the baseline's configurations).`,
		Example: `  provebench compare baseline/ci.json out/results.json
  provebench compare base.json new.json --threshold seconds_per_proof=3%,peak_rss_bytes=5%`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			th, err := compare.ParseThresholds(thresholds)
			if err != nil {
				return usagef("--threshold: %v", err)
			}
			if alpha <= 0 || alpha >= 1 {
				return usagef("--alpha: %v is not between 0 and 1", alpha)
			}
			rep, err := compare.CompareFiles(args[0], args[1], th, alpha)
			if err != nil {
				// Unreadable, foreign or mismatched documents are bad input.
				return usageError{err}
			}
			w := cmd.OutOrStdout()
			if err := rep.WriteText(w); err != nil {
				return err
			}
			if markdown != "" {
				if err := writeMarkdown(markdown, rep); err != nil {
					return err
				}
			}
			if p := os.Getenv(compare.StepSummaryEnv); p != "" {
				if err := rep.AppendMarkdown(p); err != nil {
					return fmt.Errorf("append to $%s: %w", compare.StepSummaryEnv, err)
				}
			}
			if rep.Regressed() {
				return exitError{code: exitRegression, err: errors.New("regression found")}
			}
			if missing := rep.MissingScenarios(); len(missing) > 0 {
				return exitError{code: exitUsage, err: fmt.Errorf("the new run lacks %d of the baseline's configurations (%s): an incomplete run cannot pass", len(missing), strings.Join(missing, ", "))}
			}
			return nil
		},
	}
	c.Flags().StringVar(&thresholds, "threshold", "", "per-metric thresholds over the defaults, e.g. seconds_per_proof=5%,peak_rss_bytes=10% (or =off)")
	c.Flags().Float64Var(&alpha, "alpha", compare.DefaultAlpha, "significance level of the Mann-Whitney U test")
	c.Flags().StringVar(&markdown, "markdown", "", "also write the Markdown report to this file")
	return c
}

func writeMarkdown(path string, rep *compare.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var w io.Writer = f
	if err := rep.WriteMarkdown(w); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
