package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
	"github.com/provebench/provebench/scenarios"
)

// Files a search writes under -o.
const (
	searchCSVFile   = "search.csv"
	searchFrontFile = "search-front.md"
)

// searchFlags are what --search reads of simulate's flags.
type searchFlags struct {
	memoryCap    string
	out          string // "": print only
	bestScenario string // "": none
	scenarios    []string
	calibration  []string
}

// runSearch simulates every configuration, prints the Pareto front of
// throughput against peak memory and the fastest under the memory cap,
// and writes what -o and --best-scenario ask for.
func runSearch(ctx context.Context, w io.Writer, specs []run.Spec, m *predict.Model, env results.Environment, f searchFlags) error {
	var memCap int64
	if f.memoryCap != "" {
		var err error
		if memCap, err = scenarios.ParseSize(f.memoryCap); err != nil {
			return usagef("--memory-cap: %v", err)
		}
	}
	if err := checkBestScenarioPath(f.bestScenario, f.scenarios); err != nil {
		return err
	}
	var found []predict.Candidate
	err := untilDone(ctx, func() (err error) {
		found, err = predict.Search(ctx, specs, m, int64(env.MemoryBytes))
		return err
	})
	if ctx.Err() != nil {
		return interrupted()
	}
	if err != nil {
		return usageError{err}
	}
	r := predict.NewSearchReport(found, memCap, f.scenarios, f.calibration)
	if ctx.Err() != nil {
		return interrupted()
	}
	t, err := predict.TrustOf(m, int64(env.MemoryBytes))
	if err != nil {
		return err
	}
	r.Print(w, t)
	var written []string
	if f.out != "" {
		files, err := writeSearchFiles(f.out, r)
		if err != nil {
			return err
		}
		written = append(written, files...)
	}
	if f.bestScenario != "" {
		if r.Best == nil {
			return fmt.Errorf("--best-scenario: no configuration to write: %s", r.NoBest())
		}
		if err := writeBestScenario(f.bestScenario, r, t); err != nil {
			return err
		}
		written = append(written, f.bestScenario)
	}
	if len(written) > 0 {
		results.PrintWrittenLine(w, written)
	}
	return nil
}

// writeSearchFiles writes the CSV of every prediction and the Markdown
// front under dir.
func writeSearchFiles(dir string, r *predict.SearchReport) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usagef("--out: %v", err)
	}
	var written []string
	for _, out := range []struct {
		name  string
		write func(io.Writer) error
	}{{searchCSVFile, r.WriteCSV}, {searchFrontFile, r.WriteMarkdown}} {
		var b bytes.Buffer
		if err := out.write(&b); err != nil {
			return nil, fmt.Errorf("%s: %w", out.name, err)
		}
		path := filepath.Join(dir, out.name)
		if err := results.WriteFile(path, b.Bytes()); err != nil {
			return nil, err
		}
		written = append(written, path)
	}
	return written, nil
}

// checkBestScenarioPath refuses to write the best configuration over one
// of the scenario files searched.
func checkBestScenarioPath(path string, searched []string) error {
	if path == "" {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return usagef("--best-scenario: %v", err)
	}
	for _, s := range searched {
		if a, err := filepath.Abs(s); err == nil && a == abs {
			return usagef("--best-scenario %s is a scenario file being searched: name another file", path)
		}
	}
	return nil
}

// writeBestScenario writes the best configuration as a scenario file that
// provebench run runs as is, headed by what predicted it.
func writeBestScenario(path string, r *predict.SearchReport, t *predict.Trust) error {
	data, err := scenarios.Marshal(r.Best.Spec, r.BestComment(path, run.ToolVersion(), t))
	if err != nil {
		return fmt.Errorf("--best-scenario: %w", err)
	}
	return results.WriteFile(path, data)
}
