package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/predict/calibcache"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
)

// preflight runs the pre-flight check of run and prints where its figures
// came from. The peaks are predicted by the simulator calibrated on
// calibration when given, else on the cache's runs of this host where
// there are some (unless noCache), else bounded by each strategy.
func preflight(ctx context.Context, w io.Writer, specs []run.Spec, env results.Environment, f runFlags) error {
	var hostMemory int64
	if env.MemoryBytes > 0 {
		hostMemory = int64(min(env.MemoryBytes, 1<<62))
	}
	var peaks predict.Peaks
	switch {
	case len(f.calibration) > 0:
		var notes []string
		var err error
		if peaks, notes, err = predict.CalibratedPeaks(ctx, f.calibration, predict.LoadOptions{AllowMixedCommits: f.allowMixedCommits}); err != nil {
			return usageError{err}
		}
		predict.PrintNotes(os.Stderr, notes)
	case !f.noCalibrationCache:
		peaks = predict.CachedPeaks(ctx, calibcache.Cache{Dir: calibcache.Dir(f.cacheDir)}, env)
	}
	checks, err := run.Preflight(specs, hostMemory, f.cacheDir, runPredictor(peaks))
	if err != nil {
		return usageError{fmt.Errorf("pre-flight: %w", err)}
	}
	run.PrintChecks(w, checks)
	return ctx.Err()
}

// runPredictor hands predict's peaks to run's pre-flight check, which does
// not import predict: a prediction predict has nothing to say about
// becomes run.ErrNoPrediction with its reason, and the strategy's bound
// stands. No peaks, no predictor.
func runPredictor(peaks predict.Peaks) run.Predictor {
	if peaks == nil {
		return nil
	}
	return func(s *run.Spec) (int64, string, error) {
		peak, from, err := peaks(s)
		if why, ok := noPrediction(err); ok {
			return 0, "", fmt.Errorf("%w: %s", run.ErrNoPrediction, why)
		}
		return peak, from, err
	}
}

// noPrediction is the reason a predictor gave for having nothing to say
// (a *predict.NoPrediction), and whether it gave one.
func noPrediction(err error) (string, bool) {
	var none *predict.NoPrediction
	if errors.As(err, &none) {
		return none.Reason, true
	}
	return "", false
}
