package run

import (
	"time"

	"github.com/provebench/provebench/gpu/catalog"
	"github.com/provebench/provebench/gpu/nvml"
	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/results"
)

// Series of a backend that reserved page-locked memory for datasets (a
// warm start on the CUDA backend): what the pool holds, and the part of it
// no dataset uses, which stays resident after the pipeline frees.
const (
	seriesPinnedPool = results.CounterPinnedPool
	seriesPinnedIdle = results.CounterPinnedIdle
)

// deviceStages are the backend stages that run on the device (on the CPU
// backend, on the GPU worker): their sum is a partition's device time.
// Uploads, queueing and the host's assembly are not device work.
var deviceStages = []string{prover.StageNTT, prover.StageMSMA, prover.StageMSMB1, prover.StageMSMB2, prover.StageMSML, prover.StageMSMH, prover.StageDownload}

// deviceTimes is the device time of a typical partition and of each device
// stage: each stage's median over the repetition's partitions, summed. A
// median, not a mean, because one slow partition in a short run (a kernel
// launch held up by a neighbour's upload) would otherwise move the gate's
// figure by more than the changes it is there to catch. Nil when no
// partition reached the device. On a GPU the stages are timed with CUDA
// events, on the device's own clock, which host load does not move.
func deviceTimes(stages map[string]results.StageSummary) (*float64, map[string]float64) {
	var total float64
	per := make(map[string]float64)
	for _, name := range deviceStages {
		st, ok := stages[name]
		if !ok || st.Count == 0 {
			continue
		}
		per[name] = st.P50Seconds
		total += st.P50Seconds
	}
	if len(per) == 0 {
		return nil, nil
	}
	return &total, per
}

// firstStart is how long the backend's Start took for the first partition
// a GPU worker took: with a warm device it is the upload and the NTT
// region's launch; a device that is still starting up shows here. Nil when
// no partition reached a GPU worker.
func firstStart(parts []pipeline.PartitionTiming) *float64 {
	first := -1
	var at time.Duration
	for i := range parts {
		p := &parts[i]
		if p.Device < 0 {
			continue
		}
		pickup := p.Admitted + p.Synthesis + p.QueueWait
		if first < 0 || pickup < at {
			first, at = i, pickup
		}
	}
	if first < 0 {
		return nil
	}
	s := parts[first].GPUStart.Seconds()
	return &s
}

// energyMeter reads the GPUs' energy counter around the measured run, a
// probe (sample.Probe) of EnergyJoules. It is inert (the figure stays
// absent) without NVML, on the CPU backend, or where the devices do not
// count energy: absent, not zero.
type energyMeter struct {
	nv      *nvml.NVML
	devices []int
	from    uint64
	ok      bool
}

func openEnergyMeter(be prover.Backend) *energyMeter {
	m := &energyMeter{}
	if !catalog.OnGPU(be.Name()) {
		return m
	}
	nv, err := nvml.Open()
	if err != nil {
		return m
	}
	m.nv = nv
	// The backend's devices are the first Devices() of the host, in
	// CUDA's order, which NVML shares unless CUDA_DEVICE_ORDER or
	// CUDA_VISIBLE_DEVICES reorder them (then every device is counted).
	if n := be.Devices(); n < len(nv.Devices()) {
		for i := range n {
			m.devices = append(m.devices, i)
		}
	}
	return m
}

// Begin reads the counter as the window opens.
func (m *energyMeter) Begin() {
	if m.nv == nil {
		return
	}
	mj, err := m.nv.EnergyMillijoules(m.devices)
	m.from, m.ok = mj, err == nil
}

// End records the energy since Begin, in joules, where it can be told.
func (m *energyMeter) End(rep *results.Repetition) {
	if m.nv == nil || !m.ok {
		return
	}
	mj, err := m.nv.EnergyMillijoules(m.devices)
	if err != nil || mj < m.from {
		return
	}
	j := float64(mj-m.from) / 1000
	rep.EnergyJoules = &j
}

func (m *energyMeter) close() {
	if m.nv != nil {
		_ = m.nv.Close()
	}
}

// cpuSplit is the run's CPU time split by where it went (cpuMeter), a
// probe (sample.Probe) of CPUBreakdown.
type cpuSplit struct{ m *cpuMeter }

func (p *cpuSplit) Begin() { p.m = startCPUMeter() }

func (p *cpuSplit) End(rep *results.Repetition) { rep.CPUBreakdown = p.m.stop() }
