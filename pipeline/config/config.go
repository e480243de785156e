// Package config is the configuration vocabulary of the pipeline: what a
// workload proves (Workload), how a run admits and moves partitions
// (Config, Strategy, PacerConfig), the registry of the strategies' gates
// as the rest of provebench asks about them (names, groups, descriptions,
// colours, validation, bounds on live datasets), and the checks of a
// configuration's fields (FieldError). It links no prover: spec, the
// scenario loader, the pre-flight check and the reports' colours read it
// without the engine; pipeline builds the gates it names and runs them.
package config

import (
	"time"

	"github.com/provebench/provebench/gpu/shape"
)

// Workload is what a run proves: a batch of Proofs proofs, Concurrency of
// them in flight at once (as cuzk-bench batch -n -j), each of Partitions
// partitions of Constraints constraints.
type Workload struct {
	Constraints     int `json:"constraints"`
	Partitions      int `json:"partitions"`
	Proofs          int `json:"proofs"`
	Concurrency     int `json:"concurrency"`
	SynthesisRounds int `json:"synthesis_rounds"`
	// BitFraction is the share of private wires that are bits (0 means
	// the circuit's default, one half): it sets the MSM mix, bits being
	// batch additions and the rest full MSMs.
	BitFraction float64 `json:"bit_fraction,omitempty"`
	Seed        uint64  `json:"seed"`
	// Synthesis is how a partition's dataset is made: SynthesisCompute
	// (the default, "" too) runs the circuit's synthesis; SynthesisCached
	// copies a witness synthesized once before the run into the
	// partition's freshly allocated dataset (the same allocations,
	// page-locking, sizes and lifetimes, none of the arithmetic), so that
	// synthesis outruns the GPU: the GPU-bound regime of cuzk's hosts on a
	// host whose CPUs are slower than its GPU.
	Synthesis string `json:"synthesis,omitempty"`
}

// Synthesis modes (Workload.Synthesis).
const (
	SynthesisCompute = "compute"
	SynthesisCached  = "cached"
)

// SynthesisModes lists the valid Workload.Synthesis values.
var SynthesisModes = []string{SynthesisCompute, SynthesisCached}

// Cached reports whether partitions are filled from a cached witness.
func (w Workload) Cached() bool { return w.Synthesis == SynthesisCached }

// Circuit is the member of the circuit family each partition proves (a bit
// fraction out of range, which Validate reports, gives Params that do not
// validate either).
func (w Workload) Circuit() shape.Params {
	p := shape.Params{Constraints: w.Constraints, Rounds: w.SynthesisRounds}
	if w.BitFraction != 0 {
		p.BitsPerMille, _ = shape.BitsPerMilleFor(w.BitFraction)
	}
	return p
}

// Config is the pipeline's strategy and its knobs; every field is
// independent of the others.
type Config struct {
	Strategy Strategy `json:"strategy"`
	// PartitionWorkers (pw) is the number of partition permits of the
	// release and hold strategies.
	PartitionWorkers int `json:"partition_workers"`
	// ChannelCapacity (C) bounds the channel from synthesis to the GPU
	// workers; at least 1, as in cuzk.
	ChannelCapacity int `json:"channel_capacity"`
	// EarlyFree frees a/b/c right after the NTT region instead of at
	// dealloc.
	EarlyFree bool `json:"early_free"`
	// GPUWorkers is the number of GPU workers per device.
	GPUWorkers int `json:"gpu_workers"`
	// SynthesisWorkers caps the partitions synthesizing at once, whatever
	// the admission strategy. 0 means PartitionWorkers for release and
	// hold, GOMAXPROCS for budget and pacer.
	SynthesisWorkers int `json:"synthesis_workers"`
	// Budget is the byte budget of the budget strategy, in bytes; it must
	// hold at least one partition's dataset (a/b/c and wires). Scenarios
	// write it pipeline.budget, as validation errors name it; the JSON key
	// stays budget_bytes, which results documents have always used.
	Budget int64 `json:"budget_bytes"`
	// Pacer configures the pacer strategy.
	Pacer PacerConfig `json:"pacer"`
}

// PacerConfig configures the pacer's feedback controller. Zero fields take
// the defaults of DefaultPacerConfig (Kp and Ki only when both are zero: a
// controller without feedback cannot hold its target).
type PacerConfig struct {
	// TargetDepth is the GPU queue depth (partitions synthesized and not yet
	// taken by a GPU worker) the controller holds.
	TargetDepth float64 `json:"target_depth"`
	// Kp and Ki are the proportional and integral gains. Kp is per
	// partition of depth error; Ki is per partition of error sustained for
	// one GPU service interval, so the gains carry over between partition
	// sizes with the same ratio of synthesis to GPU time.
	Kp float64 `json:"kp"`
	Ki float64 `json:"ki"`
	// Interval is the control period: how often the controller samples the
	// queue and sets the admission rate.
	Interval time.Duration `json:"interval"`
	// MaxInFlight caps partitions admitted and not yet taken by a GPU
	// worker, whatever the controller says (0: the synthesis workers plus
	// twice the target depth, rounded up).
	MaxInFlight int `json:"max_in_flight"`
}
