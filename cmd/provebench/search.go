package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/provebench/provebench/internal/units"
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
	t, err := trustOf(m, env)
	if err != nil {
		return err
	}
	printSearch(w, r, t)
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
			return fmt.Errorf("--best-scenario: no configuration to write: %s", noBest(r))
		}
		if err := writeBestScenario(f.bestScenario, r, t); err != nil {
			return err
		}
		written = append(written, f.bestScenario)
	}
	if len(written) > 0 {
		fmt.Fprintf(w, "\nwrote %s\n", strings.Join(written, ", "))
	}
	return nil
}

// trust is how far to trust a calibrated search's predictions: the
// model's in-sample error and its warnings (nil without a calibration:
// the scenarios' own costs have no error to show).
type trust struct {
	inSample predict.InSample
	warnings []string
}

func trustOf(m *predict.Model, env results.Environment) (*trust, error) {
	if m == nil {
		return nil, nil
	}
	in, err := m.InSample(int64(env.MemoryBytes))
	if err != nil {
		return nil, err
	}
	return &trust{inSample: in, warnings: m.Warnings()}, nil
}

// printSearch prints the front and the best, each prediction beside the
// model's in-sample error where it has one.
func printSearch(w io.Writer, r *predict.SearchReport, t *trust) {
	fmt.Fprintf(w, "%s simulated; Pareto front of throughput against peak RSS:\n\n", units.Plural(len(r.Candidates), "configuration"))
	width := 60
	for _, c := range r.Front {
		width = max(width, len(c.Name))
	}
	if t == nil {
		fmt.Fprintf(w, "%-*s %10s %12s\n", width, "configuration", "s/proof", "peak RSS")
		for _, c := range r.Front {
			fmt.Fprintf(w, "%-*s %10.2f %12s\n", width, c.Name, c.SecondsPerProof, units.FormatBytes(c.PeakRSS))
		}
	} else {
		sp, rss := t.inSample.SecondsPerProof.Range(), t.inSample.PeakRSS.Range()
		fmt.Fprintf(w, "%-*s %10s %16s %12s %16s\n", width, "configuration", "s/proof", "in-sample error", "peak RSS", "in-sample error")
		for _, c := range r.Front {
			fmt.Fprintf(w, "%-*s %10.2f %16s %12s %16s\n", width, c.Name, c.SecondsPerProof, sp, units.FormatBytes(c.PeakRSS), rss)
		}
		fmt.Fprintf(w, "\n%s\n", t.inSample)
		for _, warning := range t.warnings {
			fmt.Fprintf(w, "warning: %s\n", warning)
		}
	}
	if r.Best == nil {
		if r.MemoryCap > 0 {
			fmt.Fprintf(w, "\n%s\n", noBest(r))
		}
		return
	}
	fmt.Fprintf(w, "\nfastest %s: %s at %.2f s/proof, peak RSS %s%s\n", capPhrase(r), r.Best.Name, r.Best.SecondsPerProof, units.FormatBytes(r.Best.PeakRSS), t.beside())
}

// beside is the in-sample error as it follows a prediction ("" without a
// calibration).
func (t *trust) beside() string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf(" (in-sample error: s/proof %s, peak RSS %s)", t.inSample.SecondsPerProof.Range(), t.inSample.PeakRSS.Range())
}

// capPhrase says what the best had to fit.
func capPhrase(r *predict.SearchReport) string {
	if r.MemoryCap > 0 {
		return "under " + units.FormatBytes(r.MemoryCap)
	}
	return "that does not run out of memory"
}

func noBest(r *predict.SearchReport) string {
	if r.MemoryCap > 0 {
		return "no configuration stays under " + units.FormatBytes(r.MemoryCap)
	}
	return "every configuration runs out of memory"
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
func writeBestScenario(path string, r *predict.SearchReport, t *trust) error {
	best := r.Best
	comment := fmt.Sprintf(`%s: the fastest %s of %d configurations
that provebench %s simulate --search predicted, over %s,
%s.
Predicted: %.2f s per proof, peak RSS %s (%d bytes)%s.`,
		best.Name, capPhrase(r), len(r.Candidates), run.ToolVersion(), strings.Join(r.Scenarios, ", "),
		r.Calibrated(), best.SecondsPerProof, units.FormatBytes(best.PeakRSS), best.PeakRSS, t.beside())
	if t != nil {
		for _, warning := range t.warnings {
			comment += "\nWarning: " + warning + "."
		}
	}
	comment += fmt.Sprintf("\nEvery setting is explicit. Run it to check the prediction:\n  provebench run %s -o out/best", path)
	if len(r.Calibration) > 0 {
		comment += fmt.Sprintf("\n  provebench simulate %s --calibration %s --check out/best -o out/best-sim",
			path, strings.Join(r.Calibration, ","))
	}
	data, err := scenarios.Marshal(best.Spec, comment)
	if err != nil {
		return fmt.Errorf("--best-scenario: %w", err)
	}
	return results.WriteFile(path, data)
}
