package predict

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/predict/calibcache"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/sim"
	"github.com/provebench/provebench/spec"
)

// Pre-flight: run's pre-flight check (run.Preflight) holds each
// configuration to a peak RSS before anything runs. Where a calibration can
// say more than the strategy's bound, the peaks here predict it, with the
// simulator calibrated on named documents (CalibratedPeaks) or on this
// host's cached runs (CachedPeaks). The runner does not import predict:
// cmd/provebench hands these to it as a run.Predictor.

// NoPrediction is a predictor's error when it has nothing to say about a
// configuration (no cached run of its backend, runs that do not
// calibrate): the caller's own bound stands, for Reason.
type NoPrediction struct{ Reason string }

func (e *NoPrediction) Error() string { return "no prediction: " + e.Reason }

// noPrediction is a *NoPrediction with a formatted reason.
func noPrediction(format string, args ...any) error {
	return &NoPrediction{Reason: fmt.Sprintf(format, args...)}
}

// Peaks predicts a configuration's peak RSS and says where the figure
// comes from.
type Peaks func(s *spec.Spec) (peakRSS int64, from string, err error)

// CalibratedPeaks predicts peaks with the simulator calibrated on files,
// as simulate --calibration calibrates (the same documents refused); the
// notes are the calibration's, for the user. A configuration the model
// cannot simulate is an error, not a NoPrediction: the user asked for this
// calibration.
func CalibratedPeaks(ctx context.Context, files []string, o LoadOptions) (Peaks, []string, error) {
	model, err := Calibrate(ctx, files, o)
	if err != nil {
		return nil, nil, err
	}
	from := "simulated, calibrated on " + strings.Join(files, ", ")
	return func(s *spec.Spec) (int64, string, error) {
		peak, err := PredictPeak(s, model)
		return peak, from, err
	}, model.Notes, nil
}

// CachedPeaks predicts peaks with the simulator calibrated on the cache's
// runs of the host env and the configuration's backend, each backend
// calibrated once, when first asked for (one pre-flight check at a time:
// not for concurrent use). Where the cache has nothing usable, or its
// model does not simulate a configuration, the error is a *NoPrediction
// saying why.
func CachedPeaks(ctx context.Context, c calibcache.Cache, env results.Environment) Peaks {
	type calibration struct {
		model *Model
		from  string
		err   error
	}
	byBackend := map[string]calibration{}
	return func(s *spec.Spec) (int64, string, error) {
		cal, ok := byBackend[s.Backend]
		if !ok {
			cal.model, cal.from, cal.err = CalibrateCached(ctx, c, env, s.Backend)
			byBackend[s.Backend] = cal
		}
		if cal.err != nil {
			return 0, "", cal.err
		}
		peak, err := PredictPeak(s, cal.model)
		if err != nil {
			return 0, "", noPrediction("the cached calibration does not simulate it: %v", err)
		}
		return peak, cal.from, nil
	}
}

// CalibrateCached fits a model to the cached runs of a host and backend:
// those of the newest run's commit, since runs of other commits measured
// another prover. A model needs two sizes at least: from one, every cost
// law's slope is an assumption (OneSizeNote), which pre-flight does not
// refuse a run on. It says where its model comes from; its errors are
// *NoPrediction.
func CalibrateCached(ctx context.Context, c calibcache.Cache, env results.Environment, backend string) (*Model, string, error) {
	files, err := c.Files(env, backend)
	if err != nil {
		return nil, "", noPrediction("%v", err)
	}
	if len(files) == 0 {
		return nil, "", noPrediction("no cached run of the %s backend on this host", backend)
	}
	ms, err := Load(ctx, files, LoadOptions{AllowMixedCommits: true})
	if err != nil {
		return nil, "", noPrediction("the cached runs do not calibrate: %v", err)
	}
	commit := ms.Points[len(ms.Points)-1].Commit // files are oldest first
	points := slices.DeleteFunc(slices.Clone(ms.Points), func(p Point) bool { return p.Commit != commit })
	ms.Notes = nil
	model, err := ms.Fit(points)
	if err != nil {
		return nil, "", noPrediction("the cached runs do not calibrate: %v", err)
	}
	if n, ok := model.OneSize(); ok {
		return nil, "", noPrediction("the cached runs of the %s backend are %s, which pre-flight does not predict on", backend, OneSizeNote(n))
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
		units.Plural(len(runs), "cached run"), backend, pow2(sizes[0]), pow2(sizes[len(sizes)-1]))
	if len(others) > 0 {
		from += fmt.Sprintf(" (%s of other commits left out)", units.Plural(len(others), "cached run"))
	}
	return model, from, nil
}

// pow2 writes constraints, a power of two, as 2^k.
func pow2(n int) string { return fmt.Sprintf("2^%d", bits.Len(uint(n))-1) }

// PredictPeak simulates a configuration as it would run here. Its simulate
// block, if any, describes another system (costs, a host) for `provebench
// simulate`, not this run, so the calibration alone decides.
func PredictPeak(s *spec.Spec, model *Model) (int64, error) {
	here := *s
	here.Simulate = spec.SimulateSpec{}
	o, err := Options(&here, model, 0)
	if err != nil {
		return 0, err
	}
	res, err := sim.Run(o)
	if err != nil {
		return 0, err
	}
	return res.PeakRSS, nil
}
