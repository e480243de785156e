// Package model is what the simulator plays a configuration with: the
// costs of one partition's stages (Stages) and the machine it runs on
// (Host), as a calibration fits them and a simulated configuration records
// them. It links no prover and no engine: spec records them, sim plays
// them.
package model

import (
	"errors"
	"fmt"
	"time"
)

// Stages are the costs of one partition on the calibration host.
type Stages struct {
	// Synthesis is one partition's synthesis time when it has the cores
	// to itself; each partition's time is drawn uniformly from Synthesis
	// ± SynthesisSpread, the same draw for the same workload seed.
	Synthesis       time.Duration `json:"synthesis"`
	SynthesisSpread time.Duration `json:"synthesis_spread,omitempty"`
	// GPUStart is Backend.Start (uploads and the NTT region) and Finalize
	// the MSMs and assembly after it.
	GPUStart time.Duration `json:"gpu_start"`
	// Upload is the part of Start that copies the dataset to the device:
	// it holds the GPU worker but not the device, whose copy engine
	// overlaps it with the compute of other partitions.
	Upload time.Duration `json:"upload,omitempty"`
	// PageableUpload is the upload of a dataset from ordinary memory
	// rather than Host.PooledBytes's page-locked pool (a pile-up that
	// outgrew the pool: the driver copies it through its staging buffer,
	// several times slower); a dataset partly in the pool takes the
	// share of each; without a pool (Host.PooledBytes 0) every dataset is
	// in ordinary memory. Such a copy runs in the device's stream order, so on
	// a serial device it holds the device as a phase of its own rather
	// than overlapping its compute (the H200's figures: docs/simulate.md,
	// "The model"). 0: Upload.
	PageableUpload time.Duration `json:"pageable_upload,omitempty"`
	Finalize       time.Duration `json:"finalize"`
	// ABCBytes and WireBytes are one partition's dataset.
	ABCBytes  int64 `json:"abc_bytes"`
	WireBytes int64 `json:"wire_bytes"`
	// SynthesisBytes is what a partition holds while it synthesizes (0:
	// its whole dataset, allocated when synthesis starts).
	SynthesisBytes int64 `json:"synthesis_bytes,omitempty"`
	// RSSFactor is the process's RSS per byte of live dataset (allocator
	// and page overheads; 0 means 1).
	RSSFactor float64 `json:"rss_factor,omitempty"`
	// DeviceSerial makes a device run one phase at a time, Start (NTT
	// region) or Finalize (MSMs), in arrival order, as a GPU stream and
	// the CPU backend's device queue do; GPUStart and Finalize are then
	// the device's own time, without the queueing. Without it every phase
	// runs at once (the engine's test backend).
	DeviceSerial bool `json:"device_serial,omitempty"`
	// SubmitQueue, on a serial device, is the CUDA backend's way: Start
	// takes one of SubmitQueue slots, uploads and returns, and the device
	// runs the NTT region and the MSMs later, one partition after the
	// other; a slot frees when the device begins a partition. 0 is the
	// CPU backend's way: Start returns once the device has run the NTT
	// region.
	SubmitQueue int `json:"submit_queue,omitempty"`
	// DeviceReady is when, from the pipeline's start, the devices first
	// complete a partition's Start: a backend's first-use costs (the
	// CUDA backend's, after the key is loaded: docs/simulate.md), which
	// hold up the first partitions, and behind them, in a strategy that
	// holds its permits, synthesis.
	DeviceReady time.Duration `json:"device_ready,omitempty"`
	// PinStall is how long a partition that starts synthesis holds up a
	// serial device that works at that moment or starts working before
	// the stall's length has passed: on the
	// CUDA backend the synthesis worker page-locks its dataset first, and
	// the driver's page-locking stalls the device's work meanwhile (the
	// H200's figures: docs/simulate.md, "The model").
	PinStall time.Duration `json:"pin_stall,omitempty"`
}

// Host is the machine simulated on.
type Host struct {
	// Memory is the host's memory: a configuration whose predicted RSS
	// passes it runs out of memory there (0: no limit).
	Memory int64 `json:"memory,omitempty"`
	// Baseline is the process's RSS before any dataset: runtime and
	// proving key.
	Baseline int64 `json:"baseline"`
	// PooledBytes is memory reserved and resident before the run that
	// datasets are then allocated in (the CUDA backend's page-locked pool
	// of a warm start): RSS is Baseline plus the larger of the pool and
	// the live datasets, since a dataset in the pool adds nothing and one
	// beyond it (a pile-up) adds its bytes. 0: no pool.
	PooledBytes int64 `json:"pooled_bytes,omitempty"`
	// Cores is how many partitions synthesize at full speed at once; more
	// share them (0: no limit).
	Cores int `json:"cores,omitempty"`
	// SynthesisContention is how much each other partition synthesizing
	// at the same time slows one down, as a fraction of its time alone:
	// k at once each take 1 + SynthesisContention·(k-1) times as long
	// (before sharing the cores), the memory bandwidth they share. A
	// calibration fits it.
	SynthesisContention float64 `json:"synthesis_contention,omitempty"`
	// ProverCores is how many of Cores a working device's prover keeps
	// busy when the prover runs on the host (the CPU backend: its NTT and
	// MSMs are threads beside synthesis's): while a device works,
	// synthesis shares the cores as if ProverCores more partitions
	// synthesized. 0: the prover has cores of its own (a GPU).
	ProverCores int `json:"prover_cores,omitempty"`
	// Devices is the number of GPUs and GPUSpeed their speed relative to
	// the stages' (0 means 1 of each).
	Devices  int     `json:"devices,omitempty"`
	GPUSpeed float64 `json:"gpu_speed,omitempty"`
}

// Validate says what is wrong with the stages' costs, if anything.
func (s Stages) Validate() error {
	var errs []error
	if s.Synthesis <= 0 || s.SynthesisSpread < 0 || s.SynthesisSpread >= s.Synthesis {
		errs = append(errs, fmt.Errorf("stages.synthesis: %v ± %v must be > 0 with a spread below it", s.Synthesis, s.SynthesisSpread))
	}
	if s.GPUStart < 0 || s.Finalize < 0 || s.Upload < 0 || s.PageableUpload < 0 || s.DeviceReady < 0 || s.PinStall < 0 {
		errs = append(errs, fmt.Errorf("stages: gpu_start %v, upload %v, finalize %v, device_ready %v and pin_stall %v must be >= 0",
			s.GPUStart, s.Upload, s.Finalize, s.DeviceReady, s.PinStall))
	}
	if s.SubmitQueue < 0 || (s.SubmitQueue > 0 && !s.DeviceSerial) {
		errs = append(errs, fmt.Errorf("stages: submit_queue %d must be >= 0, and needs device_serial", s.SubmitQueue))
	}
	if s.ABCBytes < 0 || s.WireBytes < 0 || s.SynthesisBytes < 0 || s.RSSFactor < 0 {
		errs = append(errs, errors.New("stages: byte sizes must be >= 0"))
	}
	return errors.Join(errs...)
}

// Validate says what is wrong with the host's fields, if anything.
func (h Host) Validate() error {
	if h.Memory < 0 || h.Baseline < 0 || h.PooledBytes < 0 || h.Cores < 0 || h.ProverCores < 0 || h.SynthesisContention < 0 || h.Devices < 0 || h.GPUSpeed < 0 {
		return fmt.Errorf("host: fields must be >= 0 (%+v)", h)
	}
	return nil
}

// DeviceCount is the number of GPUs (Devices, 0 meaning 1).
func (h Host) DeviceCount() int { return max(h.Devices, 1) }

// SynthesisSpeed is the speed of each of n partitions synthesizing at once,
// against one alone: the cores shared among them, slowed by their
// contention.
func (h Host) SynthesisSpeed(n int) float64 { return h.SynthesisSpeedBusy(n, 0) }

// SynthesisSpeedBusy is SynthesisSpeed while busy devices work: on a host
// prover (ProverCores) their threads take their share of the cores too.
func (h Host) SynthesisSpeedBusy(n, busy int) float64 {
	f := 1.0
	if threads := n + busy*h.ProverCores; h.Cores > 0 && threads > h.Cores {
		f = float64(h.Cores) / float64(threads)
	}
	if n > 1 {
		f /= 1 + h.SynthesisContention*float64(n-1)
	}
	return f
}

// Shares says whether synthesis speed depends on how many synthesize.
func (h Host) Shares() bool { return h.Cores > 0 || h.SynthesisContention > 0 }

// SharesWithProver says whether synthesis speed depends on whether the
// devices work: a prover on the host's cores.
func (h Host) SharesWithProver() bool { return h.Cores > 0 && h.ProverCores > 0 }

// Speed is the GPUs' speed relative to the stages' (GPUSpeed, 0 meaning
// 1).
func (h Host) Speed() float64 {
	if h.GPUSpeed == 0 {
		return 1
	}
	return h.GPUSpeed
}
