package pipeline

import "github.com/provebench/provebench/pipeline/config"

// The configuration vocabulary is pipeline/config's, which links no prover
// (spec and the scenario loader read it); these names let the engine's
// code read as it did.
type (
	Config      = config.Config
	Workload    = config.Workload
	PacerConfig = config.PacerConfig
)
