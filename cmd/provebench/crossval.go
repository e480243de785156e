package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/results"
)

// Files simulate --cross-validate writes under -o.
const (
	crossValCSVFile     = "crossval.csv"
	crossValSummaryFile = "crossval-summary.csv"
	crossValMarkdown    = "crossval.md"
)

// crossValFlags are what --cross-validate reads of simulate's flags.
type crossValFlags struct {
	out                  string // "": print only
	familyBy             string
	targetP90, targetMax string
	allowMixedCommits    bool
	// calibration are documents in every fold's calibration, never left
	// out or predicted (the calibration set of plain shapes).
	calibration []string
}

// runCrossValidate leaves each family of the documents' configurations out
// of the calibration in turn, predicts it, prints the error table and its
// distribution, and writes them under -o. Missed targets exit 3.
func runCrossValidate(ctx context.Context, w, errw io.Writer, files []string, f crossValFlags) error {
	by, err := predict.ParseFamilyBy(f.familyBy)
	if err != nil {
		return usagef("--family-by: %v", err)
	}
	var t predict.Targets
	if t.P90, err = parsePercent(f.targetP90); err != nil {
		return usagef("--target-p90: %v", err)
	}
	if t.Max, err = parsePercent(f.targetMax); err != nil {
		return usagef("--target-max: %v", err)
	}
	ms, err := predict.Load(ctx, append(slices.Clone(f.calibration), files...), predict.LoadOptions{AllowMixedCommits: f.allowMixedCommits})
	if err != nil {
		return usageError{err}
	}
	predict.PrintNotes(errw, ms.Notes)
	var cv *predict.CrossValidation
	err = untilDone(ctx, func() (err error) {
		cv, err = predict.CrossValidate(ctx, ms, by, int64(ms.Environment.MemoryBytes), f.calibration)
		return err
	})
	if ctx.Err() != nil {
		return interrupted()
	}
	if err != nil {
		return usageError{err}
	}
	cv.Print(w, by, f.calibration)
	predict.PrintNotes(errw, cv.Notes)
	if f.out != "" {
		written, err := writeCrossValFiles(ctx, f.out, cv, files, t)
		if err != nil {
			return err
		}
		results.PrintWrittenLine(w, written)
	}
	if misses := cv.Misses(t); len(misses) > 0 {
		return exitError{code: exitRegression, err: fmt.Errorf("cross-validation missed its targets: %s", strings.Join(misses, "; "))}
	}
	return nil
}

// writeCrossValFiles writes the tables under dir, each file whole or not
// at all, and none once interrupted.
func writeCrossValFiles(ctx context.Context, dir string, cv *predict.CrossValidation, files []string, t predict.Targets) ([]string, error) {
	outs := []struct {
		name  string
		write func(io.Writer) error
	}{
		{crossValCSVFile, cv.WriteCSV},
		{crossValSummaryFile, cv.WriteSummaryCSV},
		{crossValMarkdown, func(w io.Writer) error { return cv.WriteMarkdown(w, files, t) }},
	}
	data := make([][]byte, len(outs))
	for i, out := range outs {
		var b bytes.Buffer
		if err := out.write(&b); err != nil {
			return nil, fmt.Errorf("%s: %w", out.name, err)
		}
		data[i] = b.Bytes()
	}
	if ctx.Err() != nil {
		return nil, interrupted()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usagef("--out: %v", err)
	}
	var written []string
	for i, out := range outs {
		path := filepath.Join(dir, out.name)
		if err := results.WriteFile(path, data[i]); err != nil {
			return nil, err
		}
		written = append(written, path)
	}
	return written, nil
}

// parsePercent reads a target such as 10% (or 10, also percent); "" is
// none. NaN and infinities, which ParseFloat reads, are refused: a NaN
// target compares false with every error, so it could never be missed.
func parsePercent(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || !(v > 0 && v <= 1000) {
		return 0, fmt.Errorf("%q is not a percentage such as 10%%", s)
	}
	return v / 100, nil
}

// untilDone runs work and waits for it, or returns at once when ctx is
// cancelled: simulating one large configuration cannot be stopped midway,
// and an interrupted command exits without its result (the work dies
// with the process).
func untilDone(ctx context.Context, work func() error) error {
	done := make(chan error, 1)
	go func() { done <- work() }()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-done:
		return err
	}
}

// interrupted is the error of a command stopped by a signal before it
// wrote anything.
func interrupted() error {
	return exitError{code: exitInterrupted, err: fmt.Errorf("interrupted: nothing written")}
}
