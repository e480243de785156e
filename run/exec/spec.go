package exec

import "github.com/provebench/provebench/spec"

// What a configuration is lives in package spec; the driver's code names
// the types as its own, as the runner's does.
type (
	Spec           = spec.Spec
	ExecSpec       = spec.ExecSpec
	ExecFile       = spec.ExecFile
	ExecData       = spec.ExecData
	DaemonSpec     = spec.DaemonSpec
	StatusSpec     = spec.StatusSpec
	PrometheusSpec = spec.PrometheusSpec
)
