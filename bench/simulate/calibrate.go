// Package simulate predicts scenarios instead of running them: it fits
// per-stage cost models and the memory baseline from the results of
// ordinary runs (Calibrate), plays each configuration through the
// simulator (pipeline/sim), and writes the predictions as a results
// document of the usual schema, marked simulated, so that report, compare
// and ab read it like any run.
package simulate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/provebench/provebench/bench"
	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/gpu"
	"github.com/provebench/provebench/pipeline"
)

// Point is one calibration configuration: the means of its measured
// repetitions.
type Point struct {
	File     string     `json:"file"`
	Scenario string     `json:"scenario"`
	Spec     bench.Spec `json:"-"`
	Reps     int        `json:"repetitions"`
	// Concurrent is the most partitions that synthesized at once, which
	// shared Cores cores.
	Concurrent int `json:"concurrent"`
	// Seconds per partition of each stage, as measured.
	Synthesis float64 `json:"synthesis"`
	GPUStart  float64 `json:"gpu_start"`
	Upload    float64 `json:"upload"`
	Finalize  float64 `json:"finalize"`
	// Baseline is the RSS when the pipeline started (key loaded), NaN when
	// the run kept no series; LivePeak the largest live dataset bytes
	// (synthesized plus synthesizing) sampled.
	Baseline        float64 `json:"baseline"`
	LivePeak        float64 `json:"live_peak"`
	PeakRSS         float64 `json:"peak_rss"`
	SecondsPerProof float64 `json:"seconds_per_proof"`
}

// Model is what a calibration fitted: per-stage cost laws across sizes and
// the memory baseline, for the backend and host the runs measured.
type Model struct {
	Calibration []string `json:"calibration"`
	Backend     string   `json:"backend"`
	Host        string   `json:"host"`
	// Cores is the calibration host's GOMAXPROCS: synthesis is one thread
	// per partition, so that many run at full speed.
	Cores   int `json:"cores"`
	Devices int `json:"devices"`
	// Synthesis is one partition's synthesis alone on a core, against
	// constraints × (rounds + 1).
	Synthesis PowerLaw `json:"synthesis"`
	// GPUStart (the NTT region) and Finalize (the MSMs and assembly)
	// against constraints: the device's own time per partition, from the
	// backend's stages; the device runs one at a time (DeviceSerial), and
	// the simulator adds the queueing. Upload (zero on the CPU backend)
	// holds the GPU worker but overlaps the device's compute.
	GPUStart     PowerLaw `json:"gpu_start"`
	Upload       PowerLaw `json:"upload"`
	Finalize     PowerLaw `json:"finalize"`
	DeviceSerial bool     `json:"device_serial"`
	// Baseline is the RSS before any dataset (runtime and key) against
	// constraints; Working what the peak holds beyond the baseline and the
	// live datasets (the prover's scratch: MSM buckets, quotient
	// buffers, the runtime's growth), against constraints.
	Baseline Linear  `json:"baseline"`
	Working  Linear  `json:"working"`
	Points   []Point `json:"points"`
	// Environment is the calibration host as its first document
	// describes it.
	Environment results.Environment `json:"-"`
}

// The backend stages a device runs in Start and after it; their sums are
// the device's own time, without the queueing (device_queue) that the
// engine's gpu_start and finalize include.
var (
	deviceStartStages    = []string{gpu.StageNTT}
	deviceFinalizeStages = []string{gpu.StageMSMA, gpu.StageMSMB1, gpu.StageMSMB2, gpu.StageMSMH, gpu.StageMSML, gpu.StageAssemble, gpu.StageDownload}
)

// perPartition is the sum of stages' total time over the partitions
// started.
func perPartition(st map[string]results.StageSummary, names []string) float64 {
	n := st[pipeline.StageGPUStart].Count
	if n == 0 {
		return 0
	}
	var total float64
	for _, name := range names {
		total += st[name].TotalSeconds
	}
	return total / float64(n)
}

// Calibrate fits a model to the measured repetitions of results documents.
// All must come from one backend and one host; failed and warm-up
// repetitions are left out.
func Calibrate(files []string) (*Model, error) {
	m := &Model{Calibration: files}
	for _, f := range files {
		doc, err := results.Read(f)
		if err != nil {
			return nil, fmt.Errorf("calibration %s: %w", f, err)
		}
		host := doc.Environment.Hostname + " (" + doc.Environment.CPUModel + ")"
		if m.Host == "" {
			m.Host, m.Cores, m.Environment = host, doc.Environment.GOMAXPROCS, doc.Environment
		} else if m.Host != host {
			return nil, fmt.Errorf("calibration %s: measured on %s, the others on %s: calibrate one host at a time", f, host, m.Host)
		}
		for _, sc := range doc.Scenarios {
			p, ok, err := point(f, doc, &sc)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if m.Backend == "" {
				m.Backend = sc.Backend
			} else if m.Backend != sc.Backend {
				return nil, fmt.Errorf("calibration %s: scenario %s ran on %s, others on %s: calibrate one backend at a time", f, sc.Name, sc.Backend, m.Backend)
			}
			m.Devices = max(m.Devices, p.Spec.Devices, 1)
			m.Points = append(m.Points, p)
		}
	}
	if len(m.Points) == 0 {
		return nil, errors.New("calibration: no measured repetition in " + strings.Join(files, ", "))
	}
	m.DeviceSerial = true
	return m, m.fit()
}

// point reads one scenario's measured repetitions; ok is false when it has
// none.
func point(file string, doc *results.Run, sc *results.Scenario) (Point, bool, error) {
	p := Point{File: file, Scenario: sc.Name, Baseline: math.NaN()}
	if err := json.Unmarshal(sc.Spec, &p.Spec); err != nil {
		return p, false, fmt.Errorf("calibration %s: scenario %s: spec: %w", file, sc.Name, err)
	}
	abc, wires := pipeline.DatasetBytes(p.Spec.Workload)
	one := float64(abc + wires)
	var base []float64
	for i := range sc.Repetitions {
		r := &sc.Repetitions[i]
		if !r.Measured() {
			continue
		}
		p.Reps++
		p.Synthesis += r.Stages[pipeline.StageSynthesis].MeanSeconds
		p.GPUStart += perPartition(r.Stages, deviceStartStages)
		p.Upload += perPartition(r.Stages, []string{gpu.StageUpload})
		p.Finalize += perPartition(r.Stages, deviceFinalizeStages)
		p.PeakRSS += float64(r.PeakRSSBytes)
		p.SecondsPerProof += r.SecondsPerProof
		p.Concurrent = max(p.Concurrent, int(r.PeakCounters[pipeline.CounterSynthesizing]))
		if b, live, ok := seriesMemory(r.Series, one); ok {
			base = append(base, b)
			p.LivePeak = max(p.LivePeak, live)
		}
	}
	if p.Reps == 0 {
		return p, false, nil
	}
	n := float64(p.Reps)
	p.Synthesis /= n
	p.GPUStart /= n
	p.Upload /= n
	p.Finalize /= n
	p.PeakRSS /= n
	p.SecondsPerProof /= n
	if len(base) > 0 {
		p.Baseline = mean(base)
	}
	return p, true, nil
}

// seriesMemory reads from a repetition's series the RSS when the pipeline
// started and the largest live dataset bytes.
func seriesMemory(s *results.Series, one float64) (baseline, live float64, ok bool) {
	if s == nil || len(s.T) == 0 {
		return 0, 0, false
	}
	i := slices.IndexFunc(s.T, func(t float64) bool { return t >= 0 })
	if i < 0 {
		return 0, 0, false
	}
	ds, synth := s.Counters[pipeline.CounterDatasetBytes], s.Counters[pipeline.CounterSynthesizing]
	for j := range s.T {
		if j < len(ds) && j < len(synth) {
			live = max(live, float64(ds[j])+float64(synth[j])*one)
		}
	}
	return float64(s.RSSBytes[i]), live, true
}

// synthesisSize is the x of the synthesis law.
func synthesisSize(w pipeline.Workload) float64 {
	return float64(w.Constraints) * float64(w.SynthesisRounds+1)
}

// slowdown is how much sharing the cores stretched a synthesis.
func (m *Model) slowdown(concurrent int) float64 {
	if m.Cores <= 0 || concurrent <= m.Cores {
		return 1
	}
	return float64(concurrent) / float64(m.Cores)
}

func (m *Model) fit() error {
	var sx, sy, nx, gy, uy, fy, bx, by, wy []float64
	for _, p := range m.Points {
		w := p.Spec.Workload
		sx = append(sx, synthesisSize(w))
		sy = append(sy, p.Synthesis/m.slowdown(p.Concurrent))
		nx = append(nx, float64(w.Constraints))
		gy = append(gy, p.GPUStart)
		uy = append(uy, p.Upload)
		fy = append(fy, p.Finalize)
		if !math.IsNaN(p.Baseline) {
			bx = append(bx, float64(w.Constraints))
			by = append(by, p.Baseline)
			wy = append(wy, p.PeakRSS-p.Baseline-p.LivePeak)
		}
	}
	var err error
	if m.Synthesis, err = fitPowerLaw(sx, sy); err != nil {
		return fmt.Errorf("calibration: synthesis: %w", err)
	}
	if m.GPUStart, err = fitPowerLaw(nx, gy); err != nil {
		return fmt.Errorf("calibration: gpu_start: %w", err)
	}
	if m.Upload, err = fitPowerLaw(nx, uy); err != nil {
		m.Upload = PowerLaw{} // no uploads: the CPU backend
	}
	if m.Finalize, err = fitPowerLaw(nx, fy); err != nil {
		return fmt.Errorf("calibration: finalize: %w", err)
	}
	if len(bx) == 0 {
		return errors.New("calibration: no repetition kept a series (the RSS at the pipeline's start is the baseline)")
	}
	m.Baseline = fitLinear(bx, by)
	m.Working = fitLinear(bx, wy)
	return nil
}
