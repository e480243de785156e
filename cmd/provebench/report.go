package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/compare"
	"github.com/provebench/provebench/internal/atomicfile"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/reports"
	"github.com/provebench/provebench/reports/export"
	"github.com/provebench/provebench/results"
)

// generateReport writes the report and plots of a run into dir.
func generateReport(doc *results.Run, dir string) ([]string, error) {
	return reports.Generate(doc, dir, reports.Options{StrategyColours: config.Registered().Colours()})
}

// reportHelp is report's long help.
const reportHelp = `report reads a results document written by run (results.json.gz or
results.json, compressed or not), or the output folder holding one, and
writes, into the output directory: throughput against peak memory (one point
per configuration, spread from the repeats, the Pareto front), a timeline per configuration (RSS, GPU memory and
the buffer counters on one time axis), a comparison of strategies, report.md
with the tables and report.html showing the plots beside it
(--self-contained: one file with every plot inline as SVG, to attach or mail). A timeline
draws at most some thousands of points per line (the peaks kept), whatever
the run's length; a document of more than 128 MiB of JSON (decompressed) or
16.8 million values is refused, as by every reader (sample less often, or
report a part of the sweep). An interrupt (Ctrl-C, SIGTERM) stops it with
exit status 130 before it writes anything.

--export FORMAT=FILE also writes the figures dashboards read (median seconds
per proof and peak RSS per configuration, with the repetitions' range):
github-action-benchmark (its customSmallerIsBetter JSON) or bencher (Bencher
Metric Format JSON). Repeatable.`

func newReportCmd() *cobra.Command {
	var out, title string
	var formats, exports []string
	var selfContained bool
	c := &cobra.Command{
		Use:   "report RESULTS",
		Short: "Turn a results document into plots, report.md and report.html",
		Long:  reportHelp,
		Example: `  provebench report out/run/results.json.gz -o out/run
  provebench report out/run -o out/mail --self-contained
  provebench report out/run --export github-action-benchmark=out/run/gab.json --export bencher=out/run/bmf.json   # the exports alone, nothing drawn`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			doc, err := readForReport(ctx, args[0])
			if err != nil {
				return err
			}
			if len(doc.Scenarios) == 0 {
				return usagef("%s: an empty shard has nothing to report: merge it with the other shards (provebench merge)", args[0])
			}
			if out == "" && len(exports) == 0 {
				return usagef("--out: an output directory is required (or --export alone, which draws nothing)")
			}
			for _, f := range formats {
				if f != "png" && f != "svg" {
					return usagef("--format: %q is not png or svg", f)
				}
			}
			exporters, err := parseExports(exports)
			if err != nil {
				return err
			}
			exported, err := renderExports(exporters, doc)
			if err != nil {
				return err
			}
			var files []string
			if out != "" { // --export alone draws nothing: a dashboard's JSON needs no plot
				if err := os.MkdirAll(out, 0o755); err != nil {
					return usagef("--out: %v", err)
				}
				files, err = reports.GenerateContext(ctx, doc, out, reports.Options{Formats: formats, Title: title, StrategyColours: config.Registered().Colours(), SelfContained: selfContained})
				if err != nil {
					return err
				}
			}
			for i, e := range exporters {
				if err := atomicfile.Write(e.path, exported[i]); err != nil {
					return err
				}
				files = append(files, e.path)
			}
			results.PrintWritten(cmd.OutOrStdout(), files)
			return nil
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "output directory of the report and plots (required, unless --export alone)")
	c.Flags().StringVar(&title, "title", "", "report title (default from the run)")
	c.Flags().StringSliceVar(&formats, "format", nil, "plot formats: png, svg (default both)")
	c.Flags().BoolVar(&selfContained, "self-contained", false, "report.html with every plot inline (SVG) instead of referencing the picture files beside it")
	c.Flags().StringArrayVar(&exports, "export", nil, "also write FORMAT=FILE for a dashboard: github-action-benchmark or bencher (repeatable)")
	return c
}

type exportTarget struct {
	exporter export.Exporter
	path     string
}

// parseExports reads --export FORMAT=FILE values.
func parseExports(values []string) ([]exportTarget, error) {
	var out []exportTarget
	for _, v := range values {
		name, path, ok := strings.Cut(v, "=")
		if !ok || path == "" {
			return nil, usagef("--export %q: want FORMAT=FILE, as github-action-benchmark=bench.json", v)
		}
		e, err := export.ByName(name)
		if err != nil {
			return nil, usagef("--export: %v", err)
		}
		out = append(out, exportTarget{e, path})
	}
	return out, nil
}

// renderExports renders each --export in memory, so that the files are
// written after the report, or not at all.
func renderExports(targets []exportTarget, doc *results.Run) ([][]byte, error) {
	out := make([][]byte, len(targets))
	for i, t := range targets {
		var b bytes.Buffer
		if err := t.exporter.Export(&b, doc); err != nil {
			return nil, fmt.Errorf("export %s: %w", t.exporter.Name(), err)
		}
		out[i] = b.Bytes()
	}
	return out, nil
}

// readForReport reads the document to report on: refused (bad input) past
// the limits of every reader (results.MaxDocumentBytes of JSON,
// decompressed, and results.MaxDocumentValues) or when it does not hold
// together; stopped, with ctx's error, when ctx is done, since reading a
// large document takes seconds that an interrupt should not wait for
// (nothing is written yet). arg is the document or its output folder.
func readForReport(ctx context.Context, arg string) (*results.Run, error) {
	path, err := results.InDir(arg)
	if err != nil {
		return nil, usageError{err}
	}
	doc, err := results.ReadContext(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, usageError{err}
	}
	return doc, nil
}

// compareHelp is compare's long help.
const compareHelp = `compare reads two stored results documents and, per configuration and metric,
reports the change of the median with its significance (Mann-Whitney U over
the repeats). By default only exact figures gate: failed repetitions, failed
partitions, unverified proofs, counters left non-zero and counter peaks that
repeat exactly (the strategies' bounds); any increase is a regression.

Timed figures (time, throughput, memory) are shown but gate only with
--gate-timed, which is risky: two runs measured at different times differ by
the machine's load as much as by the code. For a timed gate, measure both
sides interleaved on one machine with provebench ab.

Runs from different hardware (CPU model, CPU count, GPU models, a scenario's
backend) are refused unless --allow-different-hardware is given.

The Markdown report is appended to $GITHUB_STEP_SUMMARY when that is set.

BASE and NEW are results documents or the output folders that hold them
(results.json.gz or results.json). With --paired, one folder of an ab run
stands for its two sides (DIR/base and DIR/new).

Device time per partition (device_seconds_per_partition) gates by default
on a GPU backend, whose clock the host's load does not move; setup time and
energy are reported. A gated metric that could not be judged (too few
repetitions for the test; in --paired, an interval that holds the threshold
or an oversubscribed host) makes the outcome inconclusive: not a pass.

Exit status: 0 no regression, 3 regression, 4 inconclusive (no regression
found, but a gated metric could not be judged), 2 bad, mismatched or
different-hardware input (including a new run that lacks some of the
baseline's configurations). The first line of the report says the same.`

func newCompareCmd() *cobra.Command {
	var thresholds, markdown string
	var alpha float64
	var gateTimed, allowHW, paired bool
	var firstPairs int
	var hostClock string
	c := &cobra.Command{
		Use:   "compare BASE NEW | --paired DIR",
		Short: "Compare two runs and fail on a regression",
		Long:  compareHelp,
		Example: `  provebench compare baseline/ci.json.gz out/new/results.json.gz
  provebench compare out/baseline out/new        # output folders
  provebench compare --paired out/ab             # judge an ab run again
  provebench compare --paired out/ab --first-pairs 6   # as ab judged it after 6 pairs
  provebench compare out/baseline out/new --threshold seconds_per_proof=3%,peak_rss_bytes=5%`,
		Args: func(cmd *cobra.Command, args []string) error {
			if paired && len(args) == 1 {
				return nil
			}
			if len(args) != 2 {
				return usagef("compare takes BASE and NEW (documents or output folders), or --paired and one ab folder; got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			th, err := compare.ParseThresholds(thresholds)
			if err != nil {
				return usagef("--threshold: %v", err)
			}
			if alpha <= 0 || alpha >= 1 {
				return usagef("--alpha: %v is not between 0 and 1", alpha)
			}
			basePath, newPath, err := comparePaths(args)
			if err != nil {
				return usageError{err}
			}
			policy, err := compare.HostClockPolicyNamed(hostClock)
			if err != nil {
				return usagef("--host-clock-unjudged: %v", err)
			}
			if firstPairs < 0 || (firstPairs > 0 && !paired) {
				return usagef("--first-pairs %d: a count of pairs, with --paired", firstPairs)
			}
			rep, err := compare.CompareFiles(cmd.Context(), basePath, newPath, compare.Options{
				Thresholds: th, Alpha: alpha, GateTimed: gateTimed, AllowDifferentHardware: allowHW, Paired: paired,
				FirstPairs: firstPairs, HostClock: policy,
			})
			if err != nil {
				// Unreadable, foreign or mismatched documents are bad input.
				return usageError{err}
			}
			return publishComparison(cmd.OutOrStdout(), rep, markdown)
		},
	}
	c.Flags().StringVar(&thresholds, "threshold", "", "per-metric thresholds over the defaults, e.g. seconds_per_proof=5%,peak_rss_bytes=10% (or =off)")
	c.Flags().Float64Var(&alpha, "alpha", compare.DefaultAlpha, "significance level of the Mann-Whitney U test")
	c.Flags().StringVar(&markdown, "markdown", "", "also write the Markdown report to this file")
	c.Flags().BoolVar(&gateTimed, "gate-timed", false, "also gate timed figures (time, throughput, memory) between the stored runs: risky, see above")
	c.Flags().BoolVar(&allowHW, "allow-different-hardware", false, "compare runs from different CPUs, GPUs or backends")
	c.Flags().BoolVar(&paired, "paired", false, "BASE and NEW are the two sides of one ab run (or give its DIR alone: DIR/base, DIR/new): judge them again as ab does, by their pairs")
	c.Flags().StringVar(&hostClock, "host-clock-unjudged", "pass", "with --paired: "+"what a gated metric on the host's clock (wall time; the CPU backend's device time) that could not be judged makes of the verdict: pass (the default: the verdict rests on CPU time, the exact figures and memory, where CPU time was judged and the metric's estimate is within its threshold; the report says wall time was not judged and why) or inconclusive (exit 4)")
	c.Flags().IntVar(&firstPairs, "first-pairs", 0, "with --paired: judge only the warm-ups and pairs 1..N, as ab would have after N pairs")
	return c
}

// comparePaths resolves compare's arguments to the two documents: one ab
// folder (--paired DIR) stands for DIR/base and DIR/new; a folder stands
// for the results document in it.
func comparePaths(args []string) (base, cur string, err error) {
	if len(args) == 1 {
		args = []string{filepath.Join(args[0], "base"), filepath.Join(args[0], "new")}
	}
	if base, err = results.InDir(args[0]); err != nil {
		return "", "", fmt.Errorf("baseline: %w", err)
	}
	if cur, err = results.InDir(args[1]); err != nil {
		return "", "", fmt.Errorf("new results: %w", err)
	}
	return base, cur, nil
}

// publishComparison prints the comparison, writes its Markdown where asked
// and to $GITHUB_STEP_SUMMARY, and turns a regression into exit status 3.
func publishComparison(w io.Writer, rep *compare.Report, markdown string) error {
	return publishWith(rep.WriteText(w), rep, markdown)
}

// publishWith is publishComparison once the terminal's text is written
// (err, its writer's error): the Markdown, the step summary, the exit.
func publishWith(err error, rep *compare.Report, markdown string) error {
	if err != nil {
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
	return outcomeError(rep)
}

// outcomeError turns the comparison's outcome into its exit status: the
// same outcome the headline printed.
func outcomeError(rep *compare.Report) error {
	switch rep.Outcome() {
	case compare.Regressed:
		return exitError{code: exitRegression, err: errors.New("regression found")}
	case compare.Incomplete:
		missing := rep.MissingScenarios()
		return exitError{code: exitUsage, err: fmt.Errorf("the new run lacks %d of the baseline's configurations (%s): an incomplete run cannot pass", len(missing), strings.Join(missing, ", "))}
	case compare.NotJudged:
		return exitError{code: exitInconclusive, err: fmt.Errorf("inconclusive: %d gated metrics not judged (see the report): not a pass", len(rep.Unjudged()))}
	}
	return nil
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
