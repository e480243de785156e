package main

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
	"strings"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/predict/calibcache"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
	"github.com/provebench/provebench/sim"
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
	var predict run.Predictor
	switch {
	case len(f.calibration) > 0:
		var err error
		if predict, err = preflightPredictor(ctx, f.calibration, f.allowMixedCommits); err != nil {
			return usageError{err}
		}
	case !f.noCalibrationCache:
		predict = cachedPredictor(ctx, calibcache.Cache{Dir: calibcache.Dir(f.cacheDir)}, env)
	}
	checks, err := run.Preflight(specs, hostMemory, f.cacheDir, predict)
	if err != nil {
		return usageError{fmt.Errorf("pre-flight: %w", err)}
	}
	printPreflight(w, checks)
	return ctx.Err()
}

// preflightPredictor predicts peaks with the simulator calibrated on
// files, as simulate --calibration does: the same documents refused, the
// same notes on stderr.
func preflightPredictor(ctx context.Context, files []string, allowMixedCommits bool) (run.Predictor, error) {
	model, err := predict.Calibrate(ctx, files, predict.LoadOptions{AllowMixedCommits: allowMixedCommits})
	if err != nil {
		return nil, err
	}
	printNotes(os.Stderr, model.Notes)
	from := "simulated, calibrated on " + strings.Join(files, ", ")
	return func(s *run.Spec) (int64, string, error) {
		peak, err := predictPeak(s, model)
		return peak, from, err
	}, nil
}

// cachedPredictor predicts peaks with the simulator calibrated on the
// cache's runs of this host and the configuration's backend, calibrating
// each backend once. Where the cache has nothing usable it says why with
// run.ErrNoPrediction, and the strategy's bound stands.
func cachedPredictor(ctx context.Context, c calibcache.Cache, env results.Environment) run.Predictor {
	type calibration struct {
		model *predict.Model
		from  string
		err   error
	}
	byBackend := map[string]calibration{}
	return func(s *run.Spec) (int64, string, error) {
		cal, ok := byBackend[s.Backend]
		if !ok {
			cal.model, cal.from, cal.err = calibrateCached(ctx, c, env, s.Backend)
			byBackend[s.Backend] = cal
		}
		if cal.err != nil {
			return 0, "", cal.err
		}
		peak, err := predictPeak(s, cal.model)
		if err != nil {
			return 0, "", fmt.Errorf("%w: the cached calibration does not simulate it: %v", run.ErrNoPrediction, err)
		}
		return peak, cal.from, nil
	}
}

// calibrateCached fits a model to the cached runs of a host and backend:
// those of the newest run's commit, since runs of other commits measured
// another prover. A model needs two sizes at least: from one, every cost
// law's slope is an assumption (predict.OneSizeNote), which pre-flight
// does not refuse a run on.
func calibrateCached(ctx context.Context, c calibcache.Cache, env results.Environment, backend string) (*predict.Model, string, error) {
	files, err := c.Files(env, backend)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", run.ErrNoPrediction, err)
	}
	if len(files) == 0 {
		return nil, "", fmt.Errorf("%w: no cached run of the %s backend on this host", run.ErrNoPrediction, backend)
	}
	ms, err := predict.Load(ctx, files, predict.LoadOptions{AllowMixedCommits: true})
	if err != nil {
		return nil, "", fmt.Errorf("%w: the cached runs do not calibrate: %v", run.ErrNoPrediction, err)
	}
	commit := ms.Points[len(ms.Points)-1].Commit // files are oldest first
	points := slices.DeleteFunc(slices.Clone(ms.Points), func(p predict.Point) bool { return p.Commit != commit })
	ms.Notes = nil
	model, err := ms.Fit(points)
	if err != nil {
		return nil, "", fmt.Errorf("%w: the cached runs do not calibrate: %v", run.ErrNoPrediction, err)
	}
	if n, ok := model.OneSize(); ok {
		return nil, "", fmt.Errorf("%w: the cached runs of the %s backend are %s, which pre-flight does not predict on", run.ErrNoPrediction, backend, predict.OneSizeNote(n))
	}
	var sizes []int
	runs, others := map[string]bool{}, map[string]bool{}
	for _, p := range ms.Points {
		if p.Commit == commit {
			sizes = append(sizes, p.Spec.Workload.Constraints)
			runs[p.File] = true
		} else {
			others[p.File] = true
		}
	}
	slices.Sort(sizes)
	from := fmt.Sprintf("predicted from %s of this host, %s backend, calibrated at %s..%s constraints",
		cachedRuns(len(runs)), backend, pow2(sizes[0]), pow2(sizes[len(sizes)-1]))
	if len(others) > 0 {
		from += fmt.Sprintf(" (%s of other commits left out)", cachedRuns(len(others)))
	}
	return model, from, nil
}

// cachedRuns counts cached runs in words.
func cachedRuns(n int) string {
	if n == 1 {
		return "1 cached run"
	}
	return fmt.Sprintf("%d cached runs", n)
}

// pow2 writes constraints, a power of two, as 2^k.
func pow2(n int) string { return fmt.Sprintf("2^%d", bits.Len(uint(n))-1) }

// predictPeak simulates a configuration as it would run here. Its
// simulate block, if any, describes another system (costs, a host) for
// `provebench simulate`, not this run, so the calibration alone decides.
func predictPeak(s *run.Spec, model *predict.Model) (int64, error) {
	here := *s
	here.Simulate = run.SimulateSpec{}
	o, err := predict.Options(&here, model, 0)
	if err != nil {
		return 0, err
	}
	res, err := sim.Run(o)
	if err != nil {
		return 0, err
	}
	return res.PeakRSS, nil
}

// printPreflight says in one line per basis what the pre-flight check held
// the configurations to: how many, and the largest peak.
func printPreflight(w io.Writer, checks []run.Check) {
	var bases []string
	largest := map[string]run.Check{}
	count := map[string]int{}
	for _, c := range checks {
		if _, ok := count[c.Basis]; !ok {
			bases = append(bases, c.Basis)
		}
		count[c.Basis]++
		if c.PeakRSS >= largest[c.Basis].PeakRSS {
			largest[c.Basis] = c
		}
	}
	for _, b := range bases {
		l := largest[b]
		if b == run.NoEstimateBasis {
			fmt.Fprintf(w, "pre-flight: %s not estimated (%s)\n", configurations(count[b]), b)
			continue
		}
		what := fmt.Sprintf("%d configurations up to", count[b])
		if count[b] == 1 {
			what = "1 configuration,"
		}
		fmt.Fprintf(w, "pre-flight: %s %s of peak RSS (%s), %s\n", what, units.FormatBytes(l.PeakRSS), l.Name, b)
	}
}

// configurations counts configurations in words.
func configurations(n int) string {
	if n == 1 {
		return "1 configuration"
	}
	return fmt.Sprintf("%d configurations", n)
}

// storeCalibration keeps the run's results in the calibration cache for
// later pre-flight checks; the run does not depend on it, so a failure
// only warns.
func storeCalibration(doc *results.Run, cacheDir string) []string {
	written, err := calibcache.Cache{Dir: calibcache.Dir(cacheDir)}.Store(doc)
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: %v\n", err)
	}
	return written
}
