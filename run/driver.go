package run

import (
	"context"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/exec"
)

// A driver executes a configuration's repetitions: the built-in pipeline in
// a child process of provebench, or an external command (exec) whose
// process tree is sampled. Either way a repetition ends as one
// results.Repetition, so sampling's consumers (results, reports, compare,
// ab) never ask which driver ran.
type driver interface {
	// prepare does, once per configuration and outside every
	// measurement, what its repetitions need (a proving key, an external
	// prover's setup). An error fails the configuration, not the sweep.
	prepare(ctx context.Context, spec *Spec, sc *results.Scenario) error
	// repetition runs one repetition and returns its record; failures of
	// every kind end up in its Status.
	repetition(ctx context.Context, spec *Spec, idx int, warmup bool, progress Progress) results.Repetition
	// release ends whatever the driver keeps between repetitions (a warm
	// worker): the run moves on to another configuration, or ends.
	release()
}

// DriverExec names the exec driver in results.
const DriverExec = "exec"

// driverFor picks the driver of a configuration.
func (r *Runner) driverFor(spec *Spec) driver {
	if spec.IsExec() {
		return execDriver{&exec.Driver{Exe: r.Exe, OutDir: r.OutDir, CacheDir: r.CacheDir, GPU: r.GPU, Log: r.Log}}
	}
	return &pipelineDriver{r: r}
}

// execDriver runs an external command (run/exec); it keeps nothing
// between repetitions.
type execDriver struct{ d *exec.Driver }

func (e execDriver) prepare(ctx context.Context, spec *Spec, sc *results.Scenario) error {
	return e.d.Prepare(ctx, spec, sc)
}

func (e execDriver) repetition(ctx context.Context, spec *Spec, idx int, warmup bool, progress Progress) results.Repetition {
	return e.d.Repetition(ctx, spec, idx, warmup, progress)
}

func (execDriver) release() {}

// CheckExecPaths refuses, before anything is written, an exec
// configuration's file that would land outside the output directory
// outDir (exec.CheckPaths).
func CheckExecPaths(specs []Spec, outDir string) error { return exec.CheckPaths(specs, outDir) }

// pipelineDriver runs the built-in pipeline, each repetition in a child
// process (`provebench child`) of its own or, with Runner.ReuseProcess, in
// a warm worker that serves several in a row.
type pipelineDriver struct {
	r *Runner
	w *worker // the warm worker, between repetitions; nil when none is up
}

func (d *pipelineDriver) prepare(ctx context.Context, spec *Spec, sc *results.Scenario) error {
	return d.r.ensureKey(ctx, spec, sc)
}

func (d *pipelineDriver) repetition(ctx context.Context, spec *Spec, idx int, warmup bool, progress Progress) results.Repetition {
	if !d.r.reuses(spec) {
		return d.r.runRepetition(ctx, spec, idx, warmup, progress)
	}
	if d.w != nil && (d.w.dead() || d.w.served >= d.r.ReuseProcess) {
		d.release()
	}
	var rep results.Repetition
	if d.w == nil {
		if d.w, rep = d.r.startWorker(ctx, spec, idx, warmup, true); d.w == nil {
			return rep
		}
	} else {
		var err error
		if rep, err = d.w.request(d.r, spec, idx, warmup); err != nil {
			d.release()
			rep.Status, rep.Error = results.StatusFailed, err.Error()
			return rep
		}
	}
	rep = d.r.serveOn(ctx, d.w, spec, rep, progress)
	if rep.Status != results.StatusOK || d.w.dead() {
		// A process whose repetition failed is not trusted with the next.
		d.release()
	}
	return rep
}

func (d *pipelineDriver) release() {
	if d.w != nil {
		d.w.close()
		d.w = nil
	}
}

// reuses reports whether spec's repetitions run in warm workers: asked
// for (ReuseProcess), and on a warm clock (a cold start measures the
// setup, which a warm worker pays once).
func (r *Runner) reuses(spec *Spec) bool {
	return r.ReuseProcess > 0 && !spec.Cold()
}
