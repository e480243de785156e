package pipeline

import "github.com/provebench/provebench/pipeline/config"

// The configuration vocabulary's names the engine's tests write
// unqualified, as they did before it moved to pipeline/config.
type (
	Strategy   = config.Strategy
	FieldError = config.FieldError
)

const (
	Release         = config.Release
	Hold            = config.Hold
	Budget          = config.Budget
	Pacer           = config.Pacer
	SynthesisCached = config.SynthesisCached
)

func DatasetBytes(w Workload) (abc, wires int64) { return config.DatasetBytes(w) }
