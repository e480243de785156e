// Package prover defines the prover backend interface that the pipeline drives,
// and the types it exchanges. Implementations: gpu/cpu (gnark-crypto, runs
// anywhere) and gpu/cuda (ICICLE, build tag "cuda"); gpu/backends opens one
// by name.
//
// A backend proves a partition the way the GPU engines split the work:
// Start runs the NTT region (the quotient H from a, b, c) and queues the
// MSMs; when Start returns, a/b/c are no longer needed and the pipeline may
// free them. The Job that Start returns completes when the MSMs are done and
// the proof is assembled; until then the wires must stay alive.
package prover

import (
	"context"
	"time"

	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/hostmem"
)

// Backend proves partitions on one or more devices. All methods are safe for
// concurrent use; Start may be called by several workers per device.
type Backend interface {
	// Name is "cpu" or "cuda".
	Name() string
	// Devices is the number of devices work can be started on.
	Devices() int
	// Load makes the proving key resident on every device. It is called
	// once, before any Start.
	Load(ctx context.Context, pk *groth16.ProvingKey) error
	// Start runs the NTT region of ds on device dev and queues its MSMs.
	// When it returns, the backend no longer reads ds's a/b/c. Cancelling
	// ctx abandons the job's remaining device work.
	Start(ctx context.Context, dev int, ds *dataset.Dataset) (Job, error)
	// Stats reads one device's counters; cheap enough to sample every
	// millisecond.
	Stats(dev int) DeviceStats
	// Close waits for queued work and releases the devices.
	Close() error
}

// HostPinner is implemented by backends whose devices upload faster from
// page-locked host memory. The pipeline synthesizes into memory locked by
// the Pinner it returns (nil: none), so uploads need no staging copy.
type HostPinner interface {
	HostPinner() hostmem.Pinner
}

// HostAllocator is implemented by backends that supply the memory datasets
// are synthesized into: a pool of page-locked memory reserved ahead of the
// work (HostReserver). A nil Allocator means none: fresh memory.
type HostAllocator interface {
	HostAllocator() dataset.Allocator
}

// HostReserver is implemented by backends that can lock host memory for
// datasets before the work arrives, as a warm daemon holds its pinned
// buffers: count buffers of each size, locked once and reused. Once memory
// is reserved, the backend's HostPinner returns nil (nothing is locked per
// dataset) and its HostAllocator serves the pool, and ordinary memory when
// the pool is empty.
type HostReserver interface {
	ReserveHost(count int, sizes ...int64) error
	HostPool() hostmem.PoolStats
}

// SetupReporter is implemented by backends that time the steps of their
// start-up (opening the device, uploading the key, precomputing): what a
// repetition reports as its setup, apart from the measured work.
type SetupReporter interface {
	SetupStages() []Stage
}

// Describer is implemented by backends whose choices at load change what
// they measure (a precompute factor lowered to fit the device, how a host
// thread waits for it): named settings, recorded with each repetition.
type Describer interface {
	Settings() map[string]string
}

// Job is a partition whose MSMs are queued or running.
type Job interface {
	// Wait blocks until the job no longer uses any of the dataset (done,
	// failed or cancelled) and returns the assembled proof. It always
	// returns; cancellation comes through the context given to Start.
	Wait() (Result, error)
}

// Result is one proved partition.
type Result struct {
	Proof groth16.Proof
	// Stages are the backend's own timings (transfers, NTT region, each
	// MSM, assembly), in the order they ran.
	Stages []Stage
}

// Stage is one timed step of a backend.
type Stage struct {
	Name     string
	Duration time.Duration
}

// DeviceStats are a device's counters.
type DeviceStats struct {
	// MemoryBytes is what the backend holds for this device beyond the
	// pipeline's datasets: device allocations on a GPU, the quotient
	// buffers of the CPU backend.
	MemoryBytes int64
	// Busy is the cumulative time the device spent executing work.
	Busy time.Duration
	// Span is the device time Busy covers: from the device's start to the
	// latest moment Busy accounts for, on the same clock. Between any two
	// reads Busy grows by at most what Span grows by, so a busy fraction
	// taken as their ratio cannot pass 100%, however late a backend
	// credits its work.
	Span time.Duration
	// Queued is the number of work items waiting for the device.
	Queued int
}

// Stage names shared by the backends, so reports line them up.
const (
	StageUpload    = "upload"
	StageNTT       = "ntt"
	StageMSMA      = "msm_a"
	StageMSMB1     = "msm_b1"
	StageMSMB2     = "msm_b2"
	StageMSML      = "msm_l"
	StageMSMH      = "msm_h"
	StageDownload  = "download"
	StageAssemble  = "assemble"
	StageQueueWait = "device_queue"
)
