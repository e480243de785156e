package run

import (
	"context"

	"github.com/provebench/provebench/results"
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
}

// DriverExec names the exec driver in results.
const DriverExec = "exec"

// driverFor picks the driver of a configuration.
func (r *Runner) driverFor(spec *Spec) driver {
	if spec.IsExec() {
		return &execDriver{r: r}
	}
	return pipelineDriver{r}
}

// pipelineDriver runs the built-in pipeline, each repetition in a child
// process (`provebench child`).
type pipelineDriver struct{ r *Runner }

func (d pipelineDriver) prepare(ctx context.Context, spec *Spec, sc *results.Scenario) error {
	return d.r.ensureKey(ctx, spec, sc)
}

func (d pipelineDriver) repetition(ctx context.Context, spec *Spec, idx int, warmup bool, progress Progress) results.Repetition {
	return d.r.runRepetition(ctx, spec, idx, warmup, progress)
}
