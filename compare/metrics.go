package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/provebench/provebench/results"
)

// Metric names: the JSON names of the repetition's figures, plus the
// aggregates over repetitions below. Counter metrics are named
// "peak_counters.<counter>" and "final_counters.<counter>".
const (
	SecondsPerProof     = "seconds_per_proof"
	PartitionsPerSecond = "partitions_per_second"
	PeakRSSBytes        = "peak_rss_bytes" // the kernel's figure (VmHWM)
	PeakGPUMemoryBytes  = "peak_gpu_memory_bytes"
	DeviceBusyFraction  = "device_busy_fraction"
	// SteadyDeviceBusyFraction leaves out the ramp-up and the drain.
	SteadyDeviceBusyFraction = "steady_device_busy_fraction"
	CPUSeconds               = "cpu_seconds" // user + system over the measured run (Repetition.CPUSeconds)
	// DeviceSecondsPerPartition is the device's own time per partition
	// (CUDA events; the GPU worker's busy time on the CPU backend).
	DeviceSecondsPerPartition = "device_seconds_per_partition"
	// SetupSeconds is the time until the prover was ready, outside the
	// clock of a warm repetition.
	SetupSeconds = "setup_seconds"
	// JoulesPerProof is the GPUs' energy per proof (NVML).
	JoulesPerProof = "joules_per_proof"
	// FailedRepetitions counts repetitions (warm-ups aside) that ended
	// failed, memory-limit, timeout or crashed.
	FailedRepetitions = "failed_repetitions"
	// FailedPartitions sums failed partitions over repetitions (warm-ups
	// aside).
	FailedPartitions = "failed_partitions"
	// UnverifiedProofs sums, over measured repetitions of a verifiable
	// scenario, the proofs that did not verify.
	UnverifiedProofs = "unverified_proofs"
)

// Unit says how a metric's values read.
type Unit string

// Units.
const (
	UnitSeconds  Unit = "s"
	UnitRate     Unit = "partitions/s"
	UnitBytes    Unit = "B"
	UnitFraction Unit = "fraction"
	UnitCount    Unit = "count"
	UnitJoules   Unit = "J"
)

// Direction says which way a metric improves.
type Direction int

// Directions.
const (
	LowerIsBetter  Direction = -1
	HigherIsBetter Direction = +1
)

// metricDef describes how a metric is taken from a scenario's repetitions.
// A sampled metric has one value per measured repetition and is compared
// with the Mann-Whitney U test; an exact one is a single figure per run,
// compared directly.
type metricDef struct {
	unit   Unit
	better Direction
	// sample is the figure of one measured repetition; ok is false when the
	// repetition lacks it (a GPU figure without NVML).
	sample func(r *results.Repetition) (v float64, ok bool)
	// absent says why a repetition lacks the figure (sample's ok false).
	absent string
	// exact aggregates the scenario's repetitions into one figure.
	exact func(reps []results.Repetition) float64
	// narrow, when set, tells whether a repetition has the figure's
	// narrower reading (cpu_seconds: the run's own CPU time); where a
	// repetition of either side lacks it, both sides are read with wide
	// instead (the whole process's), so that a document from before the
	// narrower reading is not compared with one that has it.
	narrow func(r *results.Repetition) bool
	wide   func(r *results.Repetition) (v float64, ok bool)
}

// alike is the definition to read the given sides with (see narrow).
func (d metricDef) alike(sides ...[]*results.Repetition) metricDef {
	if d.narrow == nil {
		return d
	}
	for _, reps := range sides {
		for _, r := range reps {
			if !d.narrow(r) {
				d.sample = d.wide
				return d
			}
		}
	}
	return d
}

// metricOrder is the order metrics are reported in; counters follow.
var metricOrder = []string{
	SecondsPerProof, PartitionsPerSecond, DeviceSecondsPerPartition, PeakRSSBytes, PeakGPUMemoryBytes,
	DeviceBusyFraction, SteadyDeviceBusyFraction, CPUSeconds, SetupSeconds, JoulesPerProof,
	FailedRepetitions, FailedPartitions, UnverifiedProofs,
}

// optional is the sample function of a figure a repetition may lack.
func optional(get func(r *results.Repetition) *float64) func(r *results.Repetition) (float64, bool) {
	return func(r *results.Repetition) (float64, bool) {
		if p := get(r); p != nil {
			return *p, true
		}
		return 0, false
	}
}

var metricDefs = map[string]metricDef{
	SecondsPerProof: {unit: UnitSeconds, better: LowerIsBetter,
		sample: func(r *results.Repetition) (float64, bool) { return r.SecondsPerProof, true }},
	PartitionsPerSecond: {unit: UnitRate, better: HigherIsBetter,
		sample: func(r *results.Repetition) (float64, bool) { return r.PartitionsPerSecond, true }},
	PeakRSSBytes: {unit: UnitBytes, better: LowerIsBetter,
		sample: func(r *results.Repetition) (float64, bool) { return float64(r.PeakRSSBytes), true }},
	PeakGPUMemoryBytes: {unit: UnitBytes, better: LowerIsBetter,
		sample: func(r *results.Repetition) (float64, bool) {
			if r.PeakGPUMemoryBytes == nil {
				return 0, false
			}
			return float64(*r.PeakGPUMemoryBytes), true
		},
		absent: "NVML absent: GPU memory not sampled"},
	DeviceBusyFraction: {unit: UnitFraction, better: HigherIsBetter,
		sample: func(r *results.Repetition) (float64, bool) {
			if r.DeviceBusyFraction == nil {
				return 0, false
			}
			return *r.DeviceBusyFraction, true
		},
		absent: "no device busy time: the exec driver, or a backend that does not report it"},
	SteadyDeviceBusyFraction: {unit: UnitFraction, better: HigherIsBetter,
		sample: func(r *results.Repetition) (float64, bool) {
			if r.SteadyDeviceBusyFraction == nil {
				return 0, false
			}
			return *r.SteadyDeviceBusyFraction, true
		},
		absent: "no steady state: fewer than 5 partitions, or too few samples between 10% and 90% done"},
	CPUSeconds: {unit: UnitSeconds, better: LowerIsBetter,
		sample: func(r *results.Repetition) (float64, bool) { return r.CPUSeconds(), true },
		narrow: func(r *results.Repetition) bool { return r.RunCPUSeconds != nil },
		wide:   func(r *results.Repetition) (float64, bool) { return r.CPUUserSeconds + r.CPUSystemSeconds, true }},
	DeviceSecondsPerPartition: {unit: UnitSeconds, better: LowerIsBetter,
		sample: optional(func(r *results.Repetition) *float64 { return r.DeviceSecondsPerPartition }),
		absent: "no device time: the exec driver, no partition done, or a document from before device time was recorded"},
	SetupSeconds: {unit: UnitSeconds, better: LowerIsBetter,
		sample: optional(func(r *results.Repetition) *float64 { return r.SetupSeconds }),
		absent: "no setup time: the exec driver, or a document from before setup was measured apart"},
	JoulesPerProof: {unit: UnitJoules, better: LowerIsBetter,
		sample: optional(func(r *results.Repetition) *float64 { return r.JoulesPerProof }),
		absent: "no energy: NVML absent, or the device does not count energy"},
	FailedRepetitions: {unit: UnitCount, better: LowerIsBetter,
		exact: func(reps []results.Repetition) float64 {
			n := 0
			for i := range reps {
				if !reps[i].Warmup && failed(reps[i].Status) {
					n++
				}
			}
			return float64(n)
		}},
	FailedPartitions: {unit: UnitCount, better: LowerIsBetter,
		exact: func(reps []results.Repetition) float64 {
			n := 0
			for i := range reps {
				if !reps[i].Warmup {
					n += reps[i].FailedPartitions
				}
			}
			return float64(n)
		}},
	UnverifiedProofs: {unit: UnitCount, better: LowerIsBetter,
		exact: func(reps []results.Repetition) float64 {
			n := 0
			for i := range reps {
				if r := &reps[i]; r.Measured() && r.Verifiable {
					n += max(r.Proofs-r.ProofsVerified, 0)
				}
			}
			return float64(n)
		}},
}

// failed reports whether a status is a failure of the configuration. A
// cancelled repetition is the user's doing, not the code's.
func failed(s results.Status) bool {
	switch s {
	case results.StatusFailed, results.StatusMemoryLimit, results.StatusTimeout, results.StatusCrashed:
		return true
	}
	return false
}

// measured returns a scenario's measured repetitions.
func measured(sc *results.Scenario) []*results.Repetition {
	var out []*results.Repetition
	for i := range sc.Repetitions {
		if sc.Repetitions[i].Measured() {
			out = append(out, &sc.Repetitions[i])
		}
	}
	return out
}

// sampleOf returns a sampled metric's values over the measured
// repetitions, or why there are none.
func sampleOf(def metricDef, reps []*results.Repetition) ([]float64, string) {
	if len(reps) == 0 {
		return nil, "no measured repetition"
	}
	vals := make([]float64, 0, len(reps))
	for _, r := range reps {
		v, ok := def.sample(r)
		if !ok {
			return nil, def.absent
		}
		vals = append(vals, v)
	}
	return vals, ""
}

// counterNames returns the sorted union of counter names of a family over
// the measured repetitions of both sides.
func counterNames(get func(r *results.Repetition) map[string]int64, sides ...[]*results.Repetition) []string {
	names := map[string]bool{}
	for _, reps := range sides {
		for _, r := range reps {
			for k := range get(r) {
				names[k] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// counterSample returns a counter's figure in each measured repetition;
// absent when no repetition reported it.
func counterSample(reps []*results.Repetition, get func(r *results.Repetition) map[string]int64, name string) ([]float64, string) {
	if len(reps) == 0 {
		return nil, "no measured repetition"
	}
	var vals []float64
	for _, r := range reps {
		if v, ok := get(r)[name]; ok {
			vals = append(vals, float64(v))
		}
	}
	if len(vals) == 0 {
		return nil, "counter not reported"
	}
	return vals, ""
}

func peakCounters(r *results.Repetition) map[string]int64  { return r.PeakCounters }
func finalCounters(r *results.Repetition) map[string]int64 { return r.FinalCounters }

// constant reports whether every value of every sample is the same.
func constant(samples ...[]float64) bool {
	var first float64
	seen := false
	for _, s := range samples {
		for _, v := range s {
			if !seen {
				first, seen = v, true
			} else if v != first {
				return false
			}
		}
	}
	return true
}

// maxAbs is the largest magnitude of a sample: a final counter's worst
// imbalance, either sign.
func maxAbs(vals []float64) float64 {
	m := 0.0
	for _, v := range vals {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// statusCounts describes a scenario's non-warm-up repetitions by status,
// as "8 ok, 1 failed, 1 memory-limit".
func statusCounts(sc *results.Scenario) string {
	counts := map[results.Status]int{}
	for i := range sc.Repetitions {
		if !sc.Repetitions[i].Warmup {
			counts[sc.Repetitions[i].Status]++
		}
	}
	var parts []string
	if n := counts[results.StatusOK]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d ok", n))
		delete(counts, results.StatusOK)
	}
	for _, s := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	if len(parts) == 0 {
		return "no repetitions"
	}
	return strings.Join(parts, ", ")
}
