package predict

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/sim"
	"github.com/provebench/provebench/spec"
)

// Options turns a spec into what the simulator plays: the model's
// predictions at the spec's size, overridden by whatever the spec's
// simulate block writes. m may be nil when the spec writes every stage
// cost itself. hostMemory is the calibration host's memory (0: unknown).
//
// The synthesis cost is the law of the spec's synthesis mode
// (workload.synthesis): a calibration without a run of that mode cannot
// predict it, unless the spec writes its synthesis cost itself.
//
// A calibration on a host prover predicts a quiet host: its laws have the
// neighbours' share of the CPU taken out (Point.HostShare).
func Options(spec *spec.Spec, m *Model, hostMemory int64) (sim.Options, error) {
	return options(spec, synthesisMode(spec.Workload.Synthesis), m, hostMemory, 1)
}

// options is Options with the spec's synthesis mode known, on a host that
// leaves the run share of its CPU (1: a quiet host; only a host prover's
// stages, which run on that CPU, slow by it).
func options(spec *spec.Spec, mode string, m *Model, hostMemory int64, share float64) (sim.Options, error) {
	w := spec.Workload
	o := sim.Options{Workload: w, Config: spec.Pipeline}
	if m != nil {
		var err error
		if o.Stages, o.Host, err = m.stagesAndHost(spec, mode, hostMemory, share); err != nil {
			return o, err
		}
	}
	st, h := &o.Stages, &o.Host
	over := spec.Simulate
	setDur(&st.Synthesis, over.Stages.Synthesis)
	setDur(&st.SynthesisSpread, over.Stages.SynthesisSpread)
	setDur(&st.GPUStart, over.Stages.GPUStart)
	setDur(&st.Upload, over.Stages.Upload)
	setDur(&st.PageableUpload, over.Stages.PageableUpload)
	setDur(&st.Finalize, over.Stages.Finalize)
	setDur(&st.PinStall, over.Stages.PinStall)
	setDur(&st.DeviceReady, over.Stages.DeviceReady)
	setInt(&st.ABCBytes, over.Stages.ABCBytes)
	setInt(&st.WireBytes, over.Stages.WireBytes)
	setInt(&st.SynthesisBytes, over.Stages.SynthesisBytes)
	st.DeviceSerial = st.DeviceSerial || over.Stages.DeviceSerial
	if over.Stages.SubmitQueue > 0 {
		st.SubmitQueue = over.Stages.SubmitQueue
	}
	if over.Stages.RSSFactor > 0 {
		st.RSSFactor = over.Stages.RSSFactor
	}
	setInt(&h.Memory, over.Host.Memory)
	setInt(&h.Baseline, over.Host.Baseline)
	setInt(&h.PooledBytes, over.Host.PooledBytes)
	if over.Host.Cores > 0 {
		h.Cores = over.Host.Cores
	}
	if over.Host.SynthesisContention > 0 {
		h.SynthesisContention = over.Host.SynthesisContention
	}
	if over.Host.Devices > 0 {
		h.Devices = over.Host.Devices
	}
	if over.Host.GPUSpeed > 0 {
		h.GPUSpeed = over.Host.GPUSpeed
	}
	if spec.MemoryLimit > 0 && (h.Memory == 0 || spec.MemoryLimit < h.Memory) {
		h.Memory = spec.MemoryLimit
	}
	if st.Synthesis <= 0 || (st.ABCBytes == 0 && st.WireBytes == 0) {
		return o, fmt.Errorf("scenario %s (%s): no stage costs: give --calibration or write simulate.synthesis, gpu_start, finalize, abc_bytes and wire_bytes", spec.Name, spec.Source)
	}
	return o, nil
}

// stagesAndHost are the model's stage costs and host for spec, in mode, on
// a host that leaves the run share of its CPU (see options).
func (m *Model) stagesAndHost(spec *spec.Spec, mode string, hostMemory int64, share float64) (sim.Stages, sim.Host, error) {
	w := spec.Workload
	n := float64(w.Constraints)
	synth, ok := m.Synthesis[mode]
	if !ok && spec.Simulate.Stages.Synthesis <= 0 {
		return sim.Stages{}, sim.Host{}, fmt.Errorf("scenario %s (%s): the calibration measured no run with workload.synthesis %s (it measured %s): one mode's synthesis costs do not predict another's",
			spec.Name, spec.Source, mode, strings.Join(slices.Sorted(maps.Keys(m.Synthesis)), ", "))
	}
	st := sim.Stages{
		Synthesis:    seconds(synth.At(w)),
		GPUStart:     seconds(m.GPUStart.At(n)),
		Upload:       seconds(m.Upload.At(n)),
		Finalize:     seconds(m.Finalize.At(n)),
		DeviceSerial: m.DeviceSerial,
		SubmitQueue:  m.SubmitQueue,
		DeviceReady:  seconds(m.DeviceReady.At(n)),
	}
	if m.HostProver && share > 0 && share < 1 {
		st.Synthesis = time.Duration(float64(st.Synthesis) / share)
		st.GPUStart = time.Duration(float64(st.GPUStart) / share)
		st.Finalize = time.Duration(float64(st.Finalize) / share)
	}
	st.SynthesisSpread = time.Duration(synth.Spread * float64(st.Synthesis))
	st.ABCBytes, st.WireBytes = config.DatasetBytes(w)
	st.PageableUpload = seconds(m.PageableUpload * float64(st.ABCBytes+st.WireBytes))
	st.PinStall = seconds(m.PinStall * float64(st.ABCBytes+st.WireBytes))
	// The working memory counts from the start: the peak is what the
	// model predicts, and the prover's scratch is there by then.
	h := sim.Host{Cores: m.Cores, SynthesisContention: synth.ContentionAt(w.Constraints), Devices: m.Devices, Memory: hostMemory}
	if m.HostProver {
		h.ProverCores = m.Cores
	}
	if spec.Devices > 0 {
		h.Devices = min(h.Devices, spec.Devices)
	}
	var pool float64
	if m.Pooled {
		pool = float64(config.WarmPoolDatasets(w, sim.ResolveConfig(spec.Pipeline, m.Cores), h.Devices) * (st.ABCBytes + st.WireBytes))
	}
	h.PooledBytes = int64(pool)
	h.Baseline = int64(m.Baseline.At(n) + witnessBytes(w) + max(m.Working.At(n), 0))
	return st, h, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func setDur(dst *time.Duration, v time.Duration) {
	if v > 0 {
		*dst = v
	}
}

func setInt(dst *int64, v int64) {
	if v > 0 {
		*dst = v
	}
}
