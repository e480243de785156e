package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/reports"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/shard"
)

type mergeFlags struct {
	out          string
	allowMissing bool
	noReport     bool
	format       resultsFormatFlag
}

func newMergeCmd() *cobra.Command {
	var f mergeFlags
	c := &cobra.Command{
		Use:   "merge RESULTS... -o DIR",
		Short: "Merge the results of a sweep's shards (run --shard) into one results document and report",
		Long: `merge reads the results of the shards of one sweep (provebench run --shard k/n),
each a results document (results.json.gz or results.json, compressed or not)
or a directory holding one, and writes into DIR one results.json.gz (or
results.json with --results-format json) with every configuration in the order an unsharded run would
have them, results.csv, results.bench and the report (as provebench report).
Each shard's host is kept in the results (shards), every configuration names
its shard, and the report shows the host per configuration when they differ.

It refuses, writing nothing, documents that are not shards; shards of
different provebench builds (commit and version, and the binary's hash where
the commit does not identify it), scenario files (by content), configurations
(other --filter, --repeat, ...) or shard counts; two documents of one shard;
and missing shards unless --allow-missing.

Exit status: 0 merged, 1 merged but a repetition did not finish in a shard
(failed, crashed, memory limit, timeout), 2 bad or mismatched input.`,
		Example: `  provebench merge shard-1 shard-2 shard-3 shard-4 -o out/all
  provebench merge out/shard-* -o out/all --allow-missing`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(cmd.Context(), cmd.OutOrStdout(), args, f)
		},
	}
	c.Flags().StringVarP(&f.out, "out", "o", "", "output directory (required)")
	c.Flags().BoolVar(&f.allowMissing, "allow-missing", false, "merge even when some shards are absent (the result is marked incomplete)")
	c.Flags().BoolVar(&f.noReport, "no-report", false, "write results only, no report or plots")
	f.format.register(c.Flags())
	return c
}

func runMerge(ctx context.Context, w io.Writer, args []string, f mergeFlags) error {
	if f.out == "" {
		return usagef("--out: an output directory is required")
	}
	format, err := f.format.format()
	if err != nil {
		return err
	}
	inputs, err := readShards(ctx, args)
	if err != nil {
		return usageError{err}
	}
	doc, err := shard.Merge(inputs, shard.MergeOptions{AllowMissing: f.allowMissing})
	if err != nil {
		return usageError{err}
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return usagef("--out: %v", err)
	}
	written, err := writeResults(doc, f.out, format, f.noReport)
	if err != nil {
		return err
	}
	reports.PrintRunSummary(w, doc, written)
	shard.PrintMergeNotes(w, doc)
	return unfinishedError(doc, written[0])
}

// readShards reads each argument as a results document, or as a directory
// holding results.json.gz or results.json (a downloaded artifact, a shard's -o),
// stopping when ctx is done.
func readShards(ctx context.Context, args []string) ([]shard.Input, error) {
	var in []shard.Input
	for _, a := range args {
		p, err := results.InDir(a)
		if err != nil {
			return nil, err
		}
		doc, err := results.ReadContext(ctx, p)
		if err != nil {
			return nil, err
		}
		in = append(in, shard.Input{Name: p, Run: doc})
	}
	return in, nil
}

// writeResults writes the output folder's results files (the document in
// format, results.csv, results.bench: results.Folder) and, unless noReport
// or there is nothing to report, the report into dir, and records them in
// its manifest; it returns the paths written, the document first.
func writeResults(doc *results.Run, dir string, format results.Format, noReport bool) ([]string, error) {
	folder := results.Folder{Dir: dir, Format: format}
	written, err := folder.Write(doc)
	if err != nil {
		return nil, err
	}
	if !noReport && len(doc.Scenarios) > 0 {
		files, err := generateReport(doc, dir)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		written = append(written, files...)
	}
	return written, folder.WriteManifest(written)
}
