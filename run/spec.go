package run

import "github.com/provebench/provebench/spec"

// What a configuration is lives in package spec, which the scenario loader,
// the simulator and merge share without linking the runner; the runner's
// own code names the types as its own.
type (
	Spec           = spec.Spec
	SimulateSpec   = spec.SimulateSpec
	ExecSpec       = spec.ExecSpec
	ExecFile       = spec.ExecFile
	ExecData       = spec.ExecData
	DaemonSpec     = spec.DaemonSpec
	RuleSpec       = spec.RuleSpec
	StatusSpec     = spec.StatusSpec
	PrometheusSpec = spec.PrometheusSpec
)

// Values of Spec.Measure.
const (
	MeasureWarm = spec.MeasureWarm
	MeasureCold = spec.MeasureCold
)
