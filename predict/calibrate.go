// Package predict predicts scenarios instead of running them: it fits
// per-stage cost models and the memory baseline from the results of
// ordinary runs (Calibrate), plays each configuration through the
// simulator (package sim), and writes the predictions as a results
// document of the usual schema, marked simulated, so that report, compare
// and ab read it like any run. It also predicts the peaks run's pre-flight
// check holds configurations to (preflight.go), and validates its models
// on what they did not see (crossval.go).
package predict

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"

	"github.com/provebench/provebench/gpu/backends"
	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/sim"
	"github.com/provebench/provebench/spec"
)

// Point is one calibration configuration: the medians of its measured
// repetitions.
type Point struct {
	// File is the first document that measured it; Files every one whose
	// repetitions it pools (Load).
	File     string    `json:"file"`
	Files    []string  `json:"files,omitempty"`
	Scenario string    `json:"scenario"`
	Spec     spec.Spec `json:"-"`
	Reps     int       `json:"repetitions"`
	// Measure is how its repetitions' clock started (results.Repetition's
	// Measure); SynthesisMode how its datasets were filled
	// (workload.synthesis, SynthesisCompute when not named).
	Measure       string `json:"measure,omitempty"`
	SynthesisMode string `json:"synthesis_mode"`
	// Commit is the commit of its document's binary (Commit).
	Commit string `json:"commit,omitempty"`
	// Concurrent is the most partitions that synthesized at once;
	// SynthConcurrency how many synthesized alongside a partition on
	// average (time-weighted over the series: sum k^2 / sum k), which
	// shared the host's synthesis slots. 0 without a series.
	Concurrent       int     `json:"concurrent"`
	SynthConcurrency float64 `json:"synth_concurrency"`
	// SynthesisSpread is how far one partition's synthesis strayed from
	// its repetition's mean, relative to it: the half-width of a uniform
	// spread whose largest of n draws is the repetition's slowest
	// partition ((max − mean)/mean · (n+1)/(n−1)); the median over the
	// repetitions. 0 with fewer than 2 partitions.
	SynthesisSpread float64 `json:"synthesis_spread,omitempty"`
	// DeviceReady is when the first partition's Start completed, when it
	// had been held up well beyond its own cost (the backend's first-use
	// costs); 0 when no repetition showed such a stall.
	DeviceReady float64 `json:"device_ready"`
	// Seconds per partition of each stage, as measured.
	Synthesis float64 `json:"synthesis"`
	GPUStart  float64 `json:"gpu_start"`
	Upload    float64 `json:"upload"`
	Finalize  float64 `json:"finalize"`
	// DeviceGPUStart and DeviceFinalize are the NTT region's and the
	// MSMs' time per partition on the device's own clock, where the
	// repetitions recorded it (device_stage_seconds or
	// device_seconds_per_partition); 0 where they did not. Unlike the
	// stages above they exclude every wait of the host.
	DeviceGPUStart float64 `json:"device_gpu_start,omitempty"`
	DeviceFinalize float64 `json:"device_finalize,omitempty"`
	// Baseline is the RSS when the pipeline started (key loaded), NaN when
	// the run kept no series; LivePeak the largest live dataset bytes
	// (synthesized plus synthesizing) sampled.
	Baseline float64 `json:"baseline"`
	LivePeak float64 `json:"live_peak"`
	PeakRSS  float64 `json:"peak_rss"`
	// PeakGPU is the process's peak memory on its devices
	// (peak_gpu_memory_bytes, the median), 0 where none was sampled;
	// Precompute the precompute factor device 0 loaded the key with, 0
	// where no repetition recorded it.
	PeakGPU    float64 `json:"peak_gpu,omitempty"`
	Precompute int     `json:"precompute_factor,omitempty"`
	// Setup is the time before the clock (setup_seconds) and SetupStages
	// its parts (setup_stages), medians over the repetitions, warm-ups
	// included, that recorded them; 0 and nil where none did.
	Setup       float64            `json:"setup,omitempty"`
	SetupStages map[string]float64 `json:"setup_stages,omitempty"`
	// PoolBytes is the page-locked pool a warm start reserved before the
	// clock (results.CounterPinnedPool): Baseline
	// holds it, and the datasets in it add nothing to the RSS. 0 without
	// a pool.
	PoolBytes float64 `json:"pool_bytes,omitempty"`
	// PageableBytes is the dataset bytes a repetition synthesized beyond
	// the pool, into ordinary memory (unpooled_buffers, each a quarter of
	// a dataset: a, b, c and the wires are the same size), and Started
	// the partitions it started: their uploads went through the driver's
	// staging buffer. Medians over the repetitions.
	PageableBytes   float64 `json:"pageable_bytes,omitempty"`
	Started         float64 `json:"started,omitempty"`
	SecondsPerProof float64 `json:"seconds_per_proof"`
	// DeviceBusy is the share of the wall time the devices worked
	// (device_busy_fraction, the median over the repetitions): on a
	// host prover, the share of a synthesis that had the prover's threads
	// beside it. 0 where not recorded.
	DeviceBusy float64 `json:"device_busy,omitempty"`
	// Load is the host's load while its repetitions ran (medians over
	// the repetitions that recorded it); nil where none did.
	Load *PointLoad `json:"host_load,omitempty"`
	// HostShare is the share of the host's CPU that other processes left
	// to its repetitions, as it weighed on their wall time: the median of
	// each repetition's seconds per proof times its share (1 - its
	// others_cpu_fraction) over the median seconds per proof. A prover
	// on the host's cores that wants all of them goes at that share of
	// its speed on a quiet host (docs/results/cpu-quickstart-xval tests
	// it). 1 where a repetition did not record it.
	HostShare float64 `json:"host_share,omitempty"`
}

// PointLoad is a configuration's host load: the medians over its
// repetitions of results.HostLoad's figures.
type PointLoad struct {
	Load1 float64 `json:"load1"`
	Steal float64 `json:"steal_fraction"`
	// Others is the share of the CPU other processes used; -1 where no
	// repetition measured it.
	Others float64 `json:"others_cpu_fraction"`
}

// Model is what a calibration fitted: per-stage cost laws across sizes and
// the memory baseline, for the backend and host the runs measured.
type Model struct {
	Calibration []string `json:"calibration"`
	Backend     string   `json:"backend"`
	Host        string   `json:"host"`
	// Cores is the calibration host's GOMAXPROCS: synthesis is one thread
	// per partition.
	Cores   int `json:"cores"`
	Devices int `json:"devices"`
	// Measure is how the calibration runs' clock started (Measurements).
	Measure string `json:"measure,omitempty"`
	// Synthesis is, per synthesis mode the calibration measured, one
	// partition's synthesis alone on a core against constraints ×
	// (rounds + 1), and how much it slows beside others: a mode's costs
	// predict that mode only.
	Synthesis map[string]SynthesisLaw `json:"synthesis"`
	// DeviceReady is when the devices first complete a Start, against
	// constraints (zero when no calibration run showed a first-use stall).
	DeviceReady PowerLaw `json:"device_ready"`
	// PinStall is how long, per byte of its dataset, a partition starting
	// synthesis holds up a busy device (sim.Stages.PinStall: on the CUDA
	// backend the page-locking of its dataset; on the CPU backend, whose
	// prover shares the cores with synthesis, whatever a starting
	// synthesis takes from it), fitted by
	// simulating the calibration runs: the device laws are fitted on the
	// least device time seen at each size, and the stall explains the
	// rest.
	PinStall float64 `json:"pin_stall_seconds_per_byte"`
	// GPUStart (the NTT region) and Finalize (the MSMs and assembly)
	// against constraints: the device's own time per partition, from the
	// backend's stages; the device runs one at a time (DeviceSerial), and
	// the simulator adds the queueing. Upload (zero on the CPU backend)
	// holds the GPU worker but overlaps the device's compute. Each has the
	// form (CostLaw) that extrapolated best within the calibration.
	GPUStart     CostLaw `json:"gpu_start"`
	Upload       CostLaw `json:"upload"`
	Finalize     CostLaw `json:"finalize"`
	DeviceSerial bool    `json:"device_serial"`
	// HostProver says the prover ran on the host's cores, in its memory:
	// no calibration run copied a dataset to a device (no upload stage),
	// as on the CPU backend. Its NTT and MSMs then share the cores with
	// synthesis and with whatever else runs on the host, so a
	// configuration's device time is what it measured (the mean per
	// partition, the median over the configurations at a size), not the
	// least any configuration saw, and synthesis shares the cores with
	// the working prover (sim.Host.ProverCores).
	HostProver bool `json:"host_prover,omitempty"`
	// SubmitQueue is the backend's submit slots (sim.Stages.SubmitQueue):
	// 1 on the CUDA backend, whose Start returns once the partition is
	// uploaded and queued for the device; 0 on the CPU backend, whose Start
	// returns after the NTT region.
	SubmitQueue int `json:"submit_queue"`
	// Baseline is the RSS before any dataset (runtime and key; without a
	// warm start's pool, and without a cached witness) against
	// constraints; Working what the peak holds beyond the baseline and the
	// live datasets (the prover's scratch: MSM buckets, quotient
	// buffers, the runtime's growth), against constraints.
	Baseline Linear `json:"baseline"`
	Working  Linear `json:"working"`
	// GPUMemory is the devices' peak memory against the size (nil where
	// the calibration measured none, or the prover ran on the host).
	GPUMemory *GPUMemoryLaw `json:"gpu_memory,omitempty"`
	// SetupLaw is the time before the clock, part by part (nil where the
	// calibration recorded no setup stages).
	SetupLaw *SetupLaw `json:"setup,omitempty"`
	// Pooled says the calibration runs reserved a page-locked pool before
	// the clock (a warm start on the CUDA backend): a predicted
	// configuration reserves its own (config.WarmPoolDatasets), whose
	// datasets add nothing to the RSS until a pile-up outgrows it.
	Pooled bool `json:"pooled,omitempty"`
	// PageableUpload is an upload's time per byte from ordinary memory
	// (a dataset beyond the pool), fitted on the runs whose pile-up
	// outgrew their pool; 0 when none did (such uploads then take
	// Upload's time).
	PageableUpload float64 `json:"pageable_upload_seconds_per_byte,omitempty"`
	Points         []Point `json:"points"`
	// Sequential are the calibration documents that ran several
	// configurations one after another rather than interleaved
	// (Measurements.Sequential).
	Sequential []string `json:"sequential,omitempty"`
	// Environment is the calibration host as its first document
	// describes it.
	Environment results.Environment `json:"-"`
	// Notes say what the calibration left out or assumed (exec
	// configurations, commits not recorded, one size): for stderr.
	Notes []string `json:"notes,omitempty"`
}

// SynthesisLaw is the synthesis cost of one synthesis mode.
type SynthesisLaw struct {
	// Alone is one partition's synthesis alone on a core against x =
	// constraints × (rounds + 1), or constraints alone for a cached
	// witness (its copy does none of the rounds): the one law of a
	// calibration that cannot tell a round from the witness (it measured
	// no size both with and without rounds). It prices a round like the
	// witness, which a round need not cost (docs/simulate.md, "Limits",
	// has the figures).
	Alone PowerLaw `json:"alone"`
	// Witness and Round, where the calibration measured a size with
	// rounds and without, replace Alone: one partition alone costs
	// Witness(constraints) + rounds × Round(constraints), the witness
	// (written to memory) and the rounds (field arithmetic on the cores)
	// each with its own law.
	Witness *PowerLaw `json:"witness,omitempty"`
	Round   *PowerLaw `json:"round,omitempty"`
	// Contention is how much each partition synthesizing alongside slowed
	// one (sim.Host), fitted: memory bandwidth is shared long before the
	// cores run out (0 when the runs show no such slowing). It holds at
	// ContentionSize constraints and scales with the size to the power
	// ContentionExponent (ContentionAt).
	Contention float64 `json:"contention"`
	// ContentionExponent is 0 when the slowing is the same at every size,
	// 1 when it grows in proportion to the constraints: the fit keeps
	// whichever of the two fits the calibration better, ties going to 0:
	// a host's slowing can grow with the size, which one figure for every
	// size cannot carry from one size to another (docs/simulate.md,
	// "Limits", has the figures).
	ContentionExponent float64 `json:"contention_exponent,omitempty"`
	// ContentionSize is the constraints at which Contention was fitted:
	// the calibration's largest size.
	ContentionSize int `json:"contention_size,omitempty"`
	// Spread is how far one partition's synthesis strays from the law,
	// relative to it (sim.Stages.SynthesisSpread over Synthesis): the
	// median of the points' SynthesisSpread where their sharing held
	// steady (a pile-up's partitions differ by the sharing, which the
	// simulator plays itself). Partitions that finish apart let the
	// device start on the first while the last still synthesize.
	Spread float64 `json:"spread,omitempty"`
}

// cudaQueueDepth is the CUDA backend's default queue depth
// (cuda.Options.QueueDepth), which the calibration runs used: the cuda
// package builds only with its tag, so the figure is repeated here.
const cudaQueueDepth = 1

// The backend stages a device runs in Start and after it; their sums are
// the device's own time, without the queueing (device_queue) that the
// engine's gpu_start and finalize include.
var (
	deviceStartStages    = []string{prover.StageNTT}
	deviceFinalizeStages = []string{prover.StageMSMA, prover.StageMSMB1, prover.StageMSMB2, prover.StageMSMH, prover.StageMSML, prover.StageAssemble, prover.StageDownload}
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

// Calibrate fits a model to the measured repetitions of results documents
// (Load says which it accepts together); failed and warm-up repetitions
// are left out. It stops, with ctx's error, when ctx is done while it
// reads.
func Calibrate(ctx context.Context, files []string, o LoadOptions) (*Model, error) {
	ms, err := Load(ctx, files, o)
	if err != nil {
		return nil, err
	}
	return ms.Fit(ms.Points)
}

// Fit fits a model to points, some or all of ms.Points.
func (ms *Measurements) Fit(points []Point) (*Model, error) {
	if len(points) == 0 {
		return nil, errors.New("calibration: no configuration to fit")
	}
	m := &Model{
		Host: ms.Host, Cores: ms.Cores, Backend: ms.Backend, Devices: ms.Devices, Measure: ms.Measure,
		Environment: ms.Environment, Points: points, Notes: slices.Clone(ms.Notes), DeviceSerial: true,
	}
	for _, p := range points {
		for _, f := range p.documents() {
			if !slices.Contains(m.Calibration, f) {
				m.Calibration = append(m.Calibration, f)
			}
		}
	}
	for _, f := range ms.Sequential {
		if slices.Contains(m.Calibration, f) {
			m.Sequential = append(m.Sequential, f)
		}
	}
	if m.Backend == backends.CUDA {
		m.SubmitQueue = cudaQueueDepth
	}
	m.HostProver = !slices.ContainsFunc(points, func(p Point) bool { return p.Upload > 0 })
	if n, ok := m.OneSize(); ok {
		m.Notes = append(m.Notes, OneSizeNote(n))
	}
	return m, m.fit()
}

// documents are the files whose repetitions the point holds.
func (p *Point) documents() []string {
	if len(p.Files) > 0 {
		return p.Files
	}
	return []string{p.File}
}

// OneSize reports the size of a calibration that measured one only.
func (m *Model) OneSize() (int, bool) {
	n := m.Points[0].Spec.Workload.Constraints
	for _, p := range m.Points {
		if p.Spec.Workload.Constraints != n {
			return 0, false
		}
	}
	return n, true
}

// OneSizeNote says what a calibration at one size assumes: a power law
// through one size has no slope to fit, so every cost is taken as
// proportional to the constraints, and a line through one size is flat.
func OneSizeNote(constraints int) string {
	return fmt.Sprintf("calibrated at one size (2^%d constraints): every cost law's exponent is assumed 1 (each stage proportional to the constraints) and the baseline and working memory constant; predictions at other sizes rest on that assumption",
		bits.Len(uint(constraints))-1)
}

// point reads one scenario's measured repetitions and its spec, whole
// (spec's own decoder: the simulator plays it again); ok is false when it
// has no measured repetition.
func point(file string, doc *results.Run, sc *results.Scenario) (Point, bool, error) {
	p := Point{File: file, Scenario: sc.Name, Baseline: math.NaN(), Commit: Commit(doc)}
	if err := json.Unmarshal(sc.Spec, &p.Spec); err != nil {
		return p, false, fmt.Errorf("calibration %s: scenario %s: spec: %w", file, sc.Name, err)
	}
	p.SynthesisMode = synthesisMode(p.Spec.Workload.Synthesis)
	abc, wires := config.DatasetBytes(p.Spec.Workload)
	s := pointSamples{one: float64(abc + wires)}
	for i := range sc.Repetitions {
		r := &sc.Repetitions[i]
		s.addSetup(r) // a warm-up repetition carries its process's setup too
		if !r.Measured() {
			continue
		}
		if p.Reps > 0 && r.Measure != p.Measure {
			return p, false, fmt.Errorf("calibration %s: scenario %s: repetitions measured both %q and %q", file, sc.Name, p.Measure, r.Measure)
		}
		p.Measure = r.Measure
		p.Reps++
		s.add(r)
	}
	if p.Reps == 0 {
		return p, false, nil
	}
	s.summarise(&p)
	return p, true, nil
}

// pointSamples gathers a point's figures over its measured repetitions:
// one sample a repetition of each (where the repetition has it), and the
// extremes over them.
type pointSamples struct {
	one float64 // one partition's dataset bytes

	// Per repetition: stage seconds (per partition), peak RSS, seconds per
	// proof, the device's own clock, pageable bytes and the partitions
	// started beside them, synthesis's spread.
	synthesis, gpuStart, upload, finalize, peakRSS, secondsPerProof []float64
	deviceStart, deviceFinalize, pageable, started, spread, busy    []float64
	load1, steal, others, quietSPP, peakGPU                         []float64
	precompute                                                      int
	setup                                                           []float64
	setupStages                                                     map[string][]float64
	// From the series, where kept: baseline and pool bytes, the synthesis
	// concurrency seen.
	base, pool, conc []float64

	// Over the repetitions: the most partitions synthesizing at once, the
	// largest live dataset bytes, the earliest completion of a first Start.
	concurrent            int
	livePeak, deviceReady float64
}

// add takes one measured repetition's figures.
func (s *pointSamples) add(r *results.Repetition) {
	if start, fin, ok := deviceClock(r); ok {
		s.deviceStart = append(s.deviceStart, start)
		s.deviceFinalize = append(s.deviceFinalize, fin)
	}
	s.synthesis = append(s.synthesis, r.Stages[pipeline.StageSynthesis].MeanSeconds)
	s.gpuStart = append(s.gpuStart, perPartition(r.Stages, deviceStartStages))
	s.upload = append(s.upload, perPartition(r.Stages, []string{prover.StageUpload}))
	s.finalize = append(s.finalize, perPartition(r.Stages, deviceFinalizeStages))
	s.peakRSS = append(s.peakRSS, float64(r.PeakRSSBytes))
	if r.PeakGPUMemoryBytes != nil && *r.PeakGPUMemoryBytes > 0 {
		s.peakGPU = append(s.peakGPU, float64(*r.PeakGPUMemoryBytes))
	}
	s.precompute = max(s.precompute, recordedFactor(r))
	if r.UnpooledBuffers != nil {
		s.pageable = append(s.pageable, float64(*r.UnpooledBuffers)*s.one/4)
		s.started = append(s.started, float64(r.Stages[pipeline.StageGPUStart].Count))
	}
	s.secondsPerProof = append(s.secondsPerProof, r.SecondsPerProof)
	if r.DeviceBusyFraction != nil {
		s.busy = append(s.busy, *r.DeviceBusyFraction)
	}
	if h := r.HostLoad; h != nil {
		s.load1, s.steal = append(s.load1, h.Load1), append(s.steal, h.StealFraction)
		if h.OthersCPUFraction != nil {
			s.others = append(s.others, *h.OthersCPUFraction)
			s.quietSPP = append(s.quietSPP, r.SecondsPerProof*hostShare(*h.OthersCPUFraction))
		}
	}
	if st := r.Stages[pipeline.StageSynthesis]; st.Count >= 2 && st.MeanSeconds > 0 {
		n := float64(st.Count)
		s.spread = append(s.spread, (st.MaxSeconds-st.MeanSeconds)/st.MeanSeconds*(n+1)/(n-1))
	}
	s.concurrent = max(s.concurrent, int(r.PeakCounters[pipeline.CounterSynthesizing]))
	if b, pooled, live, ok := seriesMemory(r.Series, s.one); ok {
		s.base = append(s.base, b)
		s.pool = append(s.pool, pooled)
		s.livePeak = max(s.livePeak, live)
	}
	if k, ok := synthConcurrency(r.Series); ok {
		s.conc = append(s.conc, k)
	}
	own := perPartition(r.Stages, []string{prover.StageUpload}) + perPartition(r.Stages, deviceStartStages)
	if t, ok := firstStartStall(r.Series, own); ok && (s.deviceReady == 0 || t < s.deviceReady) {
		s.deviceReady = t
	}
}

// addSetup takes one repetition's setup, where it recorded one by stage.
func (s *pointSamples) addSetup(r *results.Repetition) {
	if r.SetupSeconds == nil || len(r.SetupStages) == 0 {
		return
	}
	s.setup = append(s.setup, *r.SetupSeconds)
	if s.setupStages == nil {
		s.setupStages = map[string][]float64{}
	}
	for name, t := range r.SetupStages {
		s.setupStages[name] = append(s.setupStages[name], t)
	}
}

// summarise sets p's figures from the samples; a figure that no repetition
// had stays as point set it (Baseline NaN, the others zero).
func (s *pointSamples) summarise(p *Point) {
	p.Concurrent, p.LivePeak, p.DeviceReady = s.concurrent, s.livePeak, s.deviceReady
	// Medians: one repetition slowed by the host (a VM's stolen time)
	// moves them least.
	p.Synthesis, p.GPUStart, p.Upload = stats.Median(s.synthesis), stats.Median(s.gpuStart), stats.Median(s.upload)
	p.Finalize, p.PeakRSS, p.SecondsPerProof = stats.Median(s.finalize), stats.Median(s.peakRSS), stats.Median(s.secondsPerProof)
	if len(s.deviceStart) > 0 {
		p.DeviceGPUStart, p.DeviceFinalize = stats.Median(s.deviceStart), stats.Median(s.deviceFinalize)
	}
	if len(s.peakGPU) > 0 {
		p.PeakGPU = stats.Median(s.peakGPU)
	}
	p.Precompute = s.precompute
	if len(s.setup) > 0 {
		p.Setup, p.SetupStages = stats.Median(s.setup), map[string]float64{}
		for name, ts := range s.setupStages {
			p.SetupStages[name] = stats.Median(ts)
		}
	}
	if len(s.pageable) > 0 {
		p.PageableBytes, p.Started = stats.Median(s.pageable), stats.Median(s.started)
	}
	if len(s.base) > 0 {
		p.Baseline, p.PoolBytes = mean(s.base), mean(s.pool)
	}
	if len(s.conc) > 0 {
		p.SynthConcurrency = mean(s.conc)
	}
	if len(s.spread) > 0 {
		p.SynthesisSpread = stats.Median(s.spread)
	}
	if len(s.busy) > 0 {
		p.DeviceBusy = stats.Median(s.busy)
	}
	p.HostShare = 1
	if len(s.quietSPP) == len(s.secondsPerProof) && p.SecondsPerProof > 0 {
		p.HostShare = stats.Median(s.quietSPP) / p.SecondsPerProof
	}
	if len(s.load1) > 0 {
		p.Load = &PointLoad{Load1: stats.Median(s.load1), Steal: stats.Median(s.steal), Others: -1}
		if len(s.others) > 0 {
			p.Load.Others = stats.Median(s.others)
		}
	}
}

// deviceStartNames name the device stage of Start in device_stage_seconds.
var deviceStartNames = []string{prover.StageNTT, "ntt_region"}

// deviceClock is a repetition's NTT-region and MSM time per partition on
// the device's own clock, where it recorded it: its device stages, or its
// device time per partition split as its engine stages split.
func deviceClock(r *results.Repetition) (start, finalize float64, ok bool) {
	if len(r.DeviceStageSeconds) > 0 {
		var total float64
		for _, name := range slices.Sorted(maps.Keys(r.DeviceStageSeconds)) { // one order, one sum
			s := r.DeviceStageSeconds[name]
			if name == prover.StageUpload {
				continue // overlaps the device's compute
			}
			total += s
			if slices.Contains(deviceStartNames, name) {
				start += s
			}
		}
		if r.DeviceSecondsPerPartition != nil {
			total = *r.DeviceSecondsPerPartition
		}
		return start, max(total-start, 0), total > 0
	}
	if r.DeviceSecondsPerPartition == nil || *r.DeviceSecondsPerPartition <= 0 {
		return 0, 0, false
	}
	total := *r.DeviceSecondsPerPartition
	s, f := perPartition(r.Stages, deviceStartStages), perPartition(r.Stages, deviceFinalizeStages)
	if s+f <= 0 {
		return 0, total, true
	}
	return total * s / (s + f), total * f / (s + f), true
}

// synthConcurrency is how many partitions synthesized alongside one on
// average: the synthesizing count weighted by itself over the samples.
func synthConcurrency(s *results.Series) (float64, bool) {
	if s == nil {
		return 0, false
	}
	var k1, k2 float64
	for _, k := range s.Counters[pipeline.CounterSynthesizing] {
		k1 += float64(k)
		k2 += float64(k) * float64(k)
	}
	if k1 == 0 {
		return 0, false
	}
	return k2 / k1, true
}

// firstStartStall is when the first partition's Start completed (the
// first sample with a partition finalizing), when that partition had been
// in Start (on_gpu) for more than stallFactor times own, a Start's own
// upload and device time: a stall of the backend's first use, not of
// the partition's work.
func firstStartStall(s *results.Series, own float64) (float64, bool) {
	const stallFactor = 3
	if s == nil || own <= 0 {
		return 0, false
	}
	onGPU, fin := s.Counters[pipeline.CounterOnGPU], s.Counters[pipeline.CounterFinalizing]
	began := -1.0
	for i, t := range s.T {
		if i >= len(onGPU) || i >= len(fin) || t < 0 {
			continue
		}
		if began < 0 && onGPU[i] > 0 {
			began = t
		}
		if fin[i] > 0 {
			if began >= 0 && t-began > stallFactor*own+2*s.IntervalSeconds {
				return t, true
			}
			return 0, false
		}
	}
	return 0, false
}

// seriesMemory reads from a repetition's series the RSS when the pipeline
// started, the page-locked pool it held then, and the largest live dataset
// bytes.
func seriesMemory(s *results.Series, one float64) (baseline, pool, live float64, ok bool) {
	if s == nil || len(s.T) == 0 {
		return 0, 0, 0, false
	}
	i := slices.IndexFunc(s.T, func(t float64) bool { return t >= 0 })
	if i < 0 {
		return 0, 0, 0, false
	}
	// The pool is reserved before the clock and kept to the end; its
	// counter's first samples can lag the start by a sample or two, so
	// its largest value is the pool.
	for _, v := range s.Counters[results.CounterPinnedPool] {
		pool = max(pool, float64(v))
	}
	ds, synth := s.Counters[pipeline.CounterDatasetBytes], s.Counters[pipeline.CounterSynthesizing]
	for j := range s.T {
		if j < len(ds) && j < len(synth) {
			live = max(live, float64(ds[j])+float64(synth[j])*one)
		}
	}
	return float64(s.RSSBytes[i]), pool, live, true
}

// witnessBytes is the cached witness a configuration holds before the
// clock (one dataset, synthesized once in Prepare); 0 when it synthesizes.
func witnessBytes(w config.Workload) float64 {
	if !w.Cached() {
		return 0
	}
	abc, wires := config.DatasetBytes(w)
	return float64(abc + wires)
}

// ContentionAt is the contention at a size (sim.Host.SynthesisContention).
func (l SynthesisLaw) ContentionAt(constraints int) float64 {
	if l.ContentionExponent == 0 || l.ContentionSize <= 0 {
		return l.Contention
	}
	return l.Contention * math.Pow(float64(constraints)/float64(l.ContentionSize), l.ContentionExponent)
}

// At is one partition's synthesis alone, in seconds.
func (l SynthesisLaw) At(w config.Workload) float64 {
	if l.Witness == nil || l.Round == nil || w.Cached() {
		return l.Alone.At(synthesisSize(w))
	}
	c := float64(w.Constraints)
	return l.Witness.At(c) + float64(w.SynthesisRounds)*l.Round.At(c)
}

// synthesisSize is the x of the synthesis law: constraints × (rounds+1)
// for computed synthesis, constraints alone for a cached witness, whose
// copy into each partition's dataset does none of the rounds (they ran
// once, in Prepare, outside the run).
func synthesisSize(w config.Workload) float64 {
	if w.Cached() {
		return float64(w.Constraints)
	}
	return float64(w.Constraints) * float64(w.SynthesisRounds+1)
}

// slowdown is how much synthesizing among concurrent others (on average)
// stretched a synthesis: the inverse of sim.Host.SynthesisSpeed, for a
// fractional concurrency.
func (m *Model) slowdown(concurrent, contention, proverThreads float64) float64 {
	f := 1.0
	if threads := concurrent + proverThreads; m.Cores > 0 && threads > float64(m.Cores) {
		f = threads / float64(m.Cores)
	}
	if concurrent > 1 {
		f *= 1 + contention*(concurrent-1)
	}
	return f
}

// proverThreads is how many of the cores the prover held, on average,
// beside a point's synthesis: on a host prover its threads
// (sim.Host.ProverCores) for the share of the time it worked; 0 when the
// prover has cores of its own.
func (m *Model) proverThreads(p Point) float64 {
	if !m.HostProver {
		return 0
	}
	return float64(m.Cores) * p.DeviceBusy
}

// concurrency is the sharing a point's synthesis saw: its time-weighted
// average, or without a series the most at once.
func (p *Point) concurrency() float64 {
	if p.SynthConcurrency > 0 {
		return p.SynthConcurrency
	}
	return float64(p.Concurrent)
}

// fitSynthesis fits the synthesis law of each synthesis mode the points
// measured, on that mode's points only.
func (m *Model) fitSynthesis() error {
	byMode := map[string][]Point{}
	for _, p := range m.quietPoints() {
		byMode[p.SynthesisMode] = append(byMode[p.SynthesisMode], p)
	}
	m.Synthesis = map[string]SynthesisLaw{}
	for mode, points := range byMode {
		law, err := m.fitSynthesisLaw(points)
		if err != nil {
			return fmt.Errorf("mode %s: %w", mode, err)
		}
		law.Spread = synthesisSpread(points)
		m.Synthesis[mode] = law
	}
	return nil
}

// maxSpread bounds the fitted spread: the simulator needs every draw
// positive, and a wider one is a mechanism the model lacks, not noise.
const maxSpread = 0.5

// synthesisSpread is the median spread of the points whose synthesis
// shared the host steadily: their average sharing within a tenth of their
// most (a pile-up's partitions differ by the sharing they saw, which the
// simulator plays itself, not by chance); 0 when none did.
func synthesisSpread(points []Point) float64 {
	var spreads []float64
	for _, p := range points {
		if p.SynthesisSpread > 0 && p.concurrency() >= 0.9*float64(p.Concurrent) {
			spreads = append(spreads, p.SynthesisSpread)
		}
	}
	if len(spreads) == 0 {
		return 0
	}
	return min(stats.Median(spreads), maxSpread)
}

// fitSynthesisLaw fits the synthesis law together with the host's synthesis
// contention: for each candidate contention at the largest size (0 to 2, a
// hundredth at a time), the same at every size or in proportion to the
// size, the law of the times with the slowing taken out, keeping the one
// that fits best; ties go to less contention and to the same at every
// size, so that runs which never synthesized side by side say nothing
// about it, and runs that did at one size alone carry it unchanged.
func (m *Model) fitSynthesisLaw(points []Point) (SynthesisLaw, error) {
	var best SynthesisLaw
	bestErr := math.Inf(1)
	twoTerms := splitsRounds(points)
	largest := 0
	for _, p := range points {
		largest = max(largest, p.Spec.Workload.Constraints)
	}
	for _, exponent := range []float64{0, 1} {
		for hundredth := 0; hundredth <= 200; hundredth++ {
			shape := SynthesisLaw{Contention: float64(hundredth) / 100, ContentionExponent: exponent, ContentionSize: largest}
			if exponent == 0 {
				shape.ContentionSize = 0
			}
			slowdown := func(p Point) float64 {
				return m.slowdown(p.concurrency(), shape.ContentionAt(p.Spec.Workload.Constraints), m.proverThreads(p))
			}
			alone := make([]float64, len(points))
			for i, p := range points {
				alone[i] = p.Synthesis / slowdown(p)
			}
			law, err := fitAlone(points, alone, twoTerms)
			if err != nil {
				return best, err
			}
			law.Contention, law.ContentionExponent, law.ContentionSize = shape.Contention, shape.ContentionExponent, shape.ContentionSize
			var sse float64
			for _, p := range points {
				if p.Synthesis > 0 {
					d := math.Log(law.At(p.Spec.Workload)*slowdown(p)) - math.Log(p.Synthesis)
					sse += d * d
				}
			}
			if sse < bestErr*(1-1e-6) {
				bestErr, best = sse, law
			}
		}
	}
	return best, nil
}

// splitsRounds says whether points can tell a round's cost from the
// witness's: computed synthesis measured without rounds and with, at one
// size at least.
func splitsRounds(points []Point) bool {
	without, with := map[int]bool{}, map[int]bool{}
	for _, p := range points {
		w := p.Spec.Workload
		switch {
		case w.Cached():
			return false // a copy does no rounds: one law of constraints
		case w.SynthesisRounds == 0:
			without[w.Constraints] = true
		default:
			with[w.Constraints] = true
		}
	}
	for n := range without {
		if with[n] {
			return true
		}
	}
	return false
}

// fitAlone fits the law of one partition's synthesis alone (times alone,
// the slowing taken out): with twoTerms the witness's law on the runs
// without rounds, then the rounds' on what the runs with rounds took beyond
// their witness, per round; else one law of synthesisSize.
//
// Computed synthesis gets proportional laws (exponent 1, the coefficient
// fitted): the circuit does a fixed amount of work per constraint (one
// witness step, then Rounds S-box rounds on a running state:
// gpu/circuit), so its cost is linear by construction, and a free exponent
// only turns noise into a slope: a calibration spans a few sizes and a
// prediction reaches beyond them, so a free exponent carries one run's
// noise several times further. A cached witness's copy is proportional
// too: it copies a fixed number of bytes per constraint, at sizes far
// beyond any cache. docs/simulate.md (the table of what is modelled) has
// what free exponents predicted, with the results folders.
func fitAlone(points []Point, alone []float64, twoTerms bool) (SynthesisLaw, error) {
	fit := fitProportional
	var sx []float64
	for _, p := range points {
		sx = append(sx, synthesisSize(p.Spec.Workload))
	}
	one, err := fit(sx, alone)
	if err != nil || !twoTerms {
		return SynthesisLaw{Alone: one}, err
	}
	var wx, wy []float64
	for i, p := range points {
		if p.Spec.Workload.SynthesisRounds == 0 {
			wx, wy = append(wx, float64(p.Spec.Workload.Constraints)), append(wy, alone[i])
		}
	}
	witness, err := fit(wx, wy)
	if err != nil {
		return SynthesisLaw{}, fmt.Errorf("witness: %w", err)
	}
	var rx, ry []float64
	for i, p := range points {
		w := p.Spec.Workload
		if w.SynthesisRounds > 0 {
			c := float64(w.Constraints)
			rx, ry = append(rx, c), append(ry, (alone[i]-witness.At(c))/float64(w.SynthesisRounds))
		}
	}
	round, err := fit(rx, ry) // a round that cost nothing beyond the witness is left out
	if err != nil {
		return SynthesisLaw{Alone: one}, nil
	}
	return SynthesisLaw{Alone: one, Witness: &witness, Round: &round}, nil
}

func (m *Model) fit() error {
	var ux, uy, bx, by, wy, rx, ry []float64
	for _, p := range m.Points {
		w := p.Spec.Workload
		if p.PageableBytes == 0 {
			ux = append(ux, float64(w.Constraints))
			uy = append(uy, p.Upload)
		}
		if !math.IsNaN(p.Baseline) {
			// The pool holds the datasets that fit in it: the peak is the
			// baseline, the witness, the larger of the pool and the live
			// datasets, and the working memory.
			bx = append(bx, float64(w.Constraints))
			by = append(by, p.Baseline-p.PoolBytes-witnessBytes(w))
			wy = append(wy, p.PeakRSS-p.Baseline+p.PoolBytes-max(p.PoolBytes, p.LivePeak))
			m.Pooled = m.Pooled || p.PoolBytes > 0
		}
		// A warm start proves a partition before the clock: a stall of
		// the first Start there is a queue, not the backend's first use.
		if p.DeviceReady > 0 && m.Measure != results.MeasureWarm {
			rx = append(rx, float64(w.Constraints))
			ry = append(ry, p.DeviceReady)
		}
	}
	if err := m.fitSynthesis(); err != nil {
		return fmt.Errorf("calibration: synthesis: %w", err)
	}
	var err error
	if len(rx) > 0 {
		if m.DeviceReady, err = fitDeviceReady(rx, ry); err != nil {
			return fmt.Errorf("calibration: device ready: %w", err)
		}
	}
	nx, gy, fy := leastDeviceTimes(m.Points)
	if m.HostProver {
		nx, gy, fy = medianStageTimes(m.quietPoints())
	}
	if m.GPUStart, err = fitStageLaw(nx, gy); err != nil {
		return fmt.Errorf("calibration: gpu_start: %w", err)
	}
	if m.Upload, err = fitStageLaw(ux, uy); err != nil {
		m.Upload = CostLaw{} // no uploads: the CPU backend
	}
	m.PageableUpload = m.fitPageableUpload()
	if m.Finalize, err = fitStageLaw(nx, fy); err != nil {
		return fmt.Errorf("calibration: finalize: %w", err)
	}
	if n, one := m.OneSize(); one && m.HostProver {
		if m.Finalize, err = msmLawThrough(float64(n), m.Finalize.At(float64(n))); err != nil {
			return fmt.Errorf("calibration: finalize: %w", err)
		}
		m.Notes = append(m.Notes, msmLawNote(n, m.Finalize))
	}
	if len(bx) == 0 {
		return errors.New("calibration: no repetition kept a series (the RSS at the pipeline's start is the baseline)")
	}
	m.Baseline = fitLinear(bx, by)
	m.Working = fitLinear(bx, wy)
	m.GPUMemory = m.fitGPUMemory()
	m.SetupLaw = m.fitSetup()
	if m.Pooled || m.HostProver {
		// Nothing is page-locked during a run with a pool: a dataset in
		// it was locked before the clock, one beyond it is pageable. A
		// host prover locks nothing, and what synthesis takes from it is
		// in the stage times it measured.
		m.PinStall = 0
		return nil
	}
	return m.fitPinStall()
}

// fitPageableUpload is the upload time per byte from ordinary memory: in
// each run with datasets beyond its pool, the uploads' total less what
// the pooled bytes take at the pinned law, over the pageable bytes; the
// median over such runs. 0 when no run outgrew its pool.
func (m *Model) fitPageableUpload() float64 {
	var rates []float64
	for _, p := range m.Points {
		if p.PageableBytes <= 0 || p.Started <= 0 {
			continue
		}
		abc, wires := config.DatasetBytes(p.Spec.Workload)
		one := float64(abc + wires)
		pinned := m.Upload.At(float64(p.Spec.Workload.Constraints)) / one
		total := p.Upload * p.Started
		if r := (total - (p.Started*one-p.PageableBytes)*pinned) / p.PageableBytes; r > pinned {
			rates = append(rates, r)
		}
	}
	if len(rates) == 0 {
		return 0
	}
	return stats.Median(rates)
}

// leastDeviceTimes is, at each size, the NTT and MSM times of the
// configuration whose device time was least: other partitions only ever
// hold a device up. Where configurations recorded the device's own clock
// it is taken as it is (the least of those at the size), since it holds
// no wait to leave out.
func leastDeviceTimes(points []Point) (sizes, start, finalize []float64) {
	least := map[int][2]float64{}
	clocked := map[int]bool{}
	for _, p := range points {
		n := p.Spec.Workload.Constraints
		t := [2]float64{p.GPUStart, p.Finalize}
		own := p.DeviceGPUStart+p.DeviceFinalize > 0
		if own {
			t = [2]float64{p.DeviceGPUStart, p.DeviceFinalize}
		}
		if clocked[n] && !own {
			continue
		}
		if q, ok := least[n]; !ok || (own && !clocked[n]) || t[0]+t[1] < q[0]+q[1] {
			least[n] = t
		}
		clocked[n] = clocked[n] || own
	}
	for _, n := range slices.Sorted(maps.Keys(least)) {
		sizes = append(sizes, float64(n))
		start = append(start, least[n][0])
		finalize = append(finalize, least[n][1])
	}
	return sizes, start, finalize
}

// minHostShare bounds the share of the CPU a repetition is taken to have
// had: a figure nearer 0 says more about the sampling than the host.
const minHostShare = 0.05

// hostShare is the share of the host's CPU other processes left to a
// repetition that measured their use.
func hostShare(others float64) float64 { return min(max(1-others, minHostShare), 1) }

// quietPoints are the points as a quiet host would have measured them:
// on a host prover, the host-side stage times at their HostShare (a
// prover with cores of its own keeps them as measured). The laws are
// fitted to these; a check predicts each point at its own share again.
func (m *Model) quietPoints() []Point {
	if !m.HostProver {
		return m.Points
	}
	out := slices.Clone(m.Points)
	for i := range out {
		f := out[i].share()
		out[i].Synthesis *= f
		out[i].GPUStart *= f
		out[i].Finalize *= f
	}
	return out
}

// share is HostShare, 1 where unknown.
func (p *Point) share() float64 {
	if p.HostShare <= 0 {
		return 1
	}
	return p.HostShare
}

// medianStageTimes is, at each size, the median over the configurations of
// the NTT and MSM times per partition they measured (each the mean over a
// repetition's partitions, the median over its repetitions): a host
// prover's times, which include its sharing of the cores (the device's
// own clock, the median partition of each stage, leaves out the slow
// ones that the wall time pays for).
func medianStageTimes(points []Point) (sizes, start, finalize []float64) {
	byN := map[int][][2]float64{}
	for _, p := range points {
		n := p.Spec.Workload.Constraints
		byN[n] = append(byN[n], [2]float64{p.GPUStart, p.Finalize})
	}
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		var g, f []float64
		for _, t := range byN[n] {
			g, f = append(g, t[0]), append(f, t[1])
		}
		sizes = append(sizes, float64(n))
		start = append(start, stats.Median(g))
		finalize = append(finalize, stats.Median(f))
	}
	return sizes, start, finalize
}

// fitPinStall picks the stall per dataset byte (0 to 2 s per GiB, in
// steps of 0.01) with which the simulated calibration runs spend the
// device time per partition they measured (least squares on logarithms).
// Ties go to the smaller stall.
func (m *Model) fitPinStall() error {
	const gib = 1 << 30
	bestErr := math.Inf(1)
	for step := 0; step <= 200; step++ {
		rate := float64(step) / 100 / gib
		m.PinStall = rate
		var sse float64
		for i := range m.Points {
			p := &m.Points[i]
			measured := p.GPUStart + p.Finalize
			if measured <= 0 {
				continue
			}
			o, err := options(&p.Spec, p.SynthesisMode, m, 0, 1)
			if err != nil {
				return fmt.Errorf("calibration: %s: %w", p.Scenario, err)
			}
			res, err := sim.Run(o)
			if err != nil {
				return fmt.Errorf("calibration: %s: %w", p.Scenario, err)
			}
			n := float64(max(res.Report.PartitionsDone, 1))
			simulated := o.Stages.GPUStart.Seconds() + o.Stages.Finalize.Seconds() + res.DeviceStalled.Seconds()/n
			d := math.Log(simulated / measured)
			sse += d * d
		}
		if sse >= bestErr*(1-1e-6) {
			// The error is convex in the stall: past its least it only grows.
			m.PinStall = float64(step-1) / 100 / gib
			break
		}
		bestErr = sse
	}
	return nil
}

// fitDeviceReady fits the first-use stall against constraints on the
// earliest stall seen at each size: a later one includes waiting for
// synthesis.
func fitDeviceReady(xs, ys []float64) (PowerLaw, error) {
	least := map[float64]float64{}
	for i, x := range xs {
		if y, ok := least[x]; !ok || ys[i] < y {
			least[x] = ys[i]
		}
	}
	var lx, ly []float64
	for x, y := range least {
		lx = append(lx, x)
		ly = append(ly, y)
	}
	return fitPowerLaw(lx, ly)
}
