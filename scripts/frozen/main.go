// Command frozen judges a frozen prediction by the runs made after it:
// for each configuration that both the prediction (a results document of
// provebench simulate) and the runs (one of provebench run) hold, the
// predicted partitions/s and peak RSS beside the medians of the measured
// repetitions and the signed errors, then, over the configurations that
// ran, each metric's |error| median, p90 (nearest rank) and max against
// the target. simulate --check prints the stages beside s/proof from a
// model calibrated again; this reads the committed prediction itself, so
// what is judged is what was frozen.
//
// A configuration predicted to pass its memory limit is right when its
// runs stopped there, and stays out of the errors; one that did not run
// (a call's time limit cut it, say), or whose predicted or measured figure
// is not finite, is named as not judged and fails the prediction.
//
//	go run ./scripts/frozen -target 10% PREDICTION RUNS
//
// PREDICTION and RUNS are results documents or their output folders.
// Exit status: 0 when both p90s are within the target, every outcome was
// predicted right and every configuration was judged; 3 when one is not
// (a configuration not run, or a figure not finite, named); 4 when no
// configuration ran; 2 on bad input.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/provebench/provebench/results"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses, as provebench's own commands use them.
const (
	exitOK           = 0
	exitUsage        = 2
	exitMissed       = 3
	exitInconclusive = 4
)

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("frozen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "10%", "the largest p90 of |error| that passes, for each metric")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: frozen [-target 10%] PREDICTION RUNS")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return exitUsage
	}
	limit, err := parsePercent(*target)
	if err != nil {
		fmt.Fprintln(stderr, "frozen: -target:", err)
		return exitUsage
	}
	pred, runs, err := readPair(fs.Arg(0), fs.Arg(1))
	if err != nil {
		fmt.Fprintln(stderr, "frozen:", err)
		return exitUsage
	}
	j := judge(pred, runs)
	j.write(stdout, fs.Arg(0), fs.Arg(1), limit)
	return j.status(limit)
}

// parsePercent reads 10% or 10 as 0.10.
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q: want a percentage above 0, such as 10%%", s)
	}
	return v / 100, nil
}

// readPair reads the prediction and the runs, and refuses a pair the
// wrong way round: the prediction must be simulated, the runs measured.
func readPair(predPath, runsPath string) (pred, runs *results.Run, err error) {
	if pred, err = read(predPath); err != nil {
		return nil, nil, err
	}
	if runs, err = read(runsPath); err != nil {
		return nil, nil, err
	}
	if pred.Simulated == nil {
		return nil, nil, fmt.Errorf("%s: not a prediction (a document of provebench simulate)", predPath)
	}
	if runs.Simulated != nil {
		return nil, nil, fmt.Errorf("%s: a prediction, not runs: judge a prediction by measurements", runsPath)
	}
	return pred, runs, nil
}

func read(path string) (*results.Run, error) {
	file, err := results.InDir(path)
	if err != nil {
		return nil, err
	}
	doc, err := results.Read(file)
	if err != nil {
		return nil, err
	}
	if len(doc.Scenarios) == 0 {
		return nil, errors.New(file + ": no configuration")
	}
	return doc, nil
}
