package predict

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/predict/calibcache"
	"github.com/provebench/provebench/results"
)

// The terminal output of the commands that predict (simulate, its
// --explain, --check, --search and --cross-validate, calibration, and
// run's pre-flight notes): cmd/provebench calls these and prints nothing
// of its own. The tables written to files are in searchout.go and
// crossvalout.go.

// PrintNotes writes what a calibration left out or assumed, a line each.
func PrintNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// PrintWarnings writes a model's warnings (Model.Warnings), a line each.
func PrintWarnings(w io.Writer, warnings []string) {
	for _, warning := range warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
}

// PrintExplanation writes Explain's section: the fitted model and its
// error on the calibration runs, then the blank line that ends it.
func (m *Model) PrintExplanation(w io.Writer, hostMemory int64) error {
	if err := m.Explain(w, hostMemory); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

// PrintCheck writes --check's section for one results document: the
// predictions beside its measurements, the error over them, and a blank
// line.
func PrintCheck(w io.Writer, file string, checks []Check) {
	fmt.Fprintf(w, "predictions for %s:\n\n", file)
	PrintChecks(w, checks)
	fmt.Fprintln(w, Summarise(checks).Line("error on "+file))
	fmt.Fprintln(w)
}

// PrintSimulatedNotes follows the run summary of a simulated document: why
// its configurations have no timelines (too many), and each one predicted
// to pass its memory limit, with the prediction's reason.
func PrintSimulatedNotes(w io.Writer, doc *results.Run) {
	if n := len(doc.Scenarios); n > MaxSeriesConfigurations {
		fmt.Fprintf(w, "note: %d configurations: no timelines (series are kept up to %d; --filter picks a few to see over time)\n", n, MaxSeriesConfigurations)
	}
	for _, sc := range doc.Scenarios {
		for _, r := range sc.Repetitions {
			if r.Status == results.StatusMemoryLimit {
				fmt.Fprintf(w, "%s: %s\n", sc.Name, r.Error)
			}
		}
	}
}

// PrintCachePath writes the calibration cache's folder alone on its line
// (calibration --path, for a shell's rm -rf "$(...)").
func PrintCachePath(w io.Writer, dir string) {
	fmt.Fprintln(w, dir)
}

// PrintCalibrationCache writes what the calibration command shows of the
// cache on the host env: its folder, the host's key, and per backend the
// cached runs and what the pre-flight check will do with them: predict
// from them (with explain, the fitted model too) or, where they predict
// nothing, take boundBasis (run's name for the strategies' bounds, which
// predict does not import) and say why.
func PrintCalibrationCache(ctx context.Context, w io.Writer, cache calibcache.Cache, env results.Environment, boundBasis string, explain bool) error {
	hostMemory := int64(min(env.MemoryBytes, 1<<62))
	fmt.Fprintf(w, "calibration cache: %s\n", cache.Dir)
	fmt.Fprintf(w, "this host: %s (%s, %s, %s)\n", calibcache.HostKey(env), env.Hostname, env.CPUModel, units.FormatBytes(hostMemory))
	backends, err := cache.Backends(env)
	if err != nil {
		return err
	}
	if len(backends) == 0 {
		fmt.Fprintln(w, "no cached run of this host: pre-flight takes each strategy's bound")
	}
	for _, b := range backends {
		files, err := cache.Files(env, b)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s backend: %s\n", b, units.Plural(len(files), "cached run"))
		for _, f := range files {
			size := "?"
			if st, err := os.Stat(f); err == nil {
				size = units.FormatBytes(st.Size())
			}
			fmt.Fprintf(w, "  %s  %s\n", filepath.Base(f), size)
		}
		model, from, err := CalibrateCached(ctx, cache, env, b)
		var none *NoPrediction
		if errors.As(err, &none) {
			fmt.Fprintf(w, "pre-flight: %s (%s)\n", boundBasis, none.Reason)
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "pre-flight: %s\n", from)
		if explain {
			fmt.Fprintln(w)
			if err := model.Explain(w, hostMemory); err != nil {
				return err
			}
		}
	}
	return nil
}
