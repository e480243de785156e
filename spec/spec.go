// Package spec says what one configuration to run is: the resolved
// settings the scenario loader produces, the runner runs, the simulator
// predicts and results record (Spec), including an external command's
// (ExecSpec). It knows nothing of how a configuration is run.
package spec

import (
	"time"

	"github.com/provebench/provebench/gpu/shape"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/sim/model"
)

// Spec is one configuration to run: what the scenario loader produces for
// every scenario and every point of a matrix, fully resolved (defaults
// applied, sizes and durations parsed).
type Spec struct {
	// Name is unique within a run; matrix points derive it from their values.
	Name string `json:"name"`
	// Source is where the configuration was written, as file:line.
	Source string `json:"source"`
	// File is the scope of Name: the scenario file's base name without
	// extension. Names are unique within a file; when several files of a
	// run define one, Name is qualified as File:name.
	File string `json:"file,omitempty"`
	// Labels are the matrix coordinates of the point (field path -> value as
	// written), empty for explicit scenarios.
	Labels      map[string]string `json:"labels,omitempty"`
	Description string            `json:"description,omitempty"`

	Workload config.Workload `json:"workload"`
	Pipeline config.Config   `json:"pipeline"`

	// Backend is cpu, cuda or auto (cuda where a GPU and the CUDA build are
	// present, else cpu).
	Backend string `json:"backend"`
	// Devices limits the devices used; 0 means all.
	Devices int `json:"devices"`
	// Key is setup, random or auto (setup up to 2^16 constraints); the
	// scenario loader resolves auto.
	Key shape.KeyKind `json:"key"`
	// Verify checks every proof; the loader turns it off for random keys,
	// whose proofs cannot verify.
	Verify bool `json:"verify"`

	Repeats        int           `json:"repeats"`
	Warmups        int           `json:"warmups"`
	SampleInterval time.Duration `json:"sample_interval"`
	Timeout        time.Duration `json:"timeout"`
	// MemoryLimit stops a repetition whose RSS exceeds it; 0 means none.
	MemoryLimit int64 `json:"memory_limit"`
	// Measure is when a repetition's clock starts: MeasureWarm (the
	// default, "" too) once the prover is ready, as in a daemon: key on
	// the device, page-locked memory reserved, one warm-up partition
	// proved on every device; MeasureCold right after the key is loaded,
	// so the first partitions pay the device's first use. Setup is timed
	// apart either way.
	Measure string `json:"measure,omitempty"`

	// Vars are the user's variables (vars: in the scenario), which matrix
	// axes sweep like any field and exec templates read as .Vars.
	Vars map[string]string `json:"vars,omitempty"`
	// Exec, when set, runs an external command instead of the built-in
	// pipeline; Workload, Pipeline, Backend and Key are then unused.
	Exec *ExecSpec `json:"exec,omitempty"`
	// Simulate holds what `provebench simulate` needs beyond a calibration:
	// stage costs written directly (for systems provebench cannot run) and
	// the host to simulate on. `run` ignores it.
	Simulate SimulateSpec `json:"simulate,omitzero"`
}

// SimulateSpec is a scenario's simulate block. Zero stage fields are taken
// from the calibration; zero host fields from the calibration host.
type SimulateSpec struct {
	Stages model.Stages `json:"stages,omitzero"`
	Host   model.Host   `json:"host,omitzero"`
}

// Values of Spec.Measure (the results' Repetition.Measure spells them the
// same way).
const (
	MeasureWarm = "warm"
	MeasureCold = "cold"
)

// Cold reports whether the spec measures a cold start.
func (s *Spec) Cold() bool { return s.Measure == MeasureCold }

// IsExec reports whether the spec runs an external command (the exec
// driver) rather than the built-in pipeline.
func (s *Spec) IsExec() bool { return s.Exec != nil }
