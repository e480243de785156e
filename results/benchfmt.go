package results

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/perf/benchfmt"
)

// Units of the Go benchmark format output, the metric table's Bench units
// (metrics.go). benchstat scales units by their last token: "-B" units
// print as KiB/MiB/GiB, "sec" ones as s/ms/µs.
const (
	UnitSecondsPerProof     = "sec/proof"
	UnitPartitionsPerSecond = "partitions/sec"
	UnitPeakRSS             = "peak-rss-B"
	UnitPeakRSSSampled      = "peak-rss-sampled-B"
	UnitPeakGPU             = "peak-gpu-B"
	UnitPeakGPUDevice       = "peak-gpu-device-B"
	UnitDeviceBusy          = "device-busy-%"
	UnitSteadyDeviceBusy    = "device-busy-steady-%"
	UnitCPUUser             = "cpu-user-sec"
	UnitCPUSystem           = "cpu-sys-sec"
	// UnitDevicePerPartition is device time per partition on the device's
	// own clock; each device stage has its own unit (DeviceStageUnit).
	UnitDevicePerPartition = "device-sec/partition"
	UnitSetup              = "setup-sec"
	UnitJoulesPerProof     = "J/proof"
)

// BenchmarkBase is the base name of every benchmark line provebench writes:
// lines read "BenchmarkProvebench/<scenario>-<GOMAXPROCS> ...".
const BenchmarkBase = "Provebench"

// higherIsBetter lists the units where a rise is an improvement; benchstat
// reads this from "Unit ... better=higher" lines (lower is its default).
func higherIsBetter() []string {
	var units []string
	for _, m := range metrics {
		if m.Bench != "" && m.Better == HigherIsBetter {
			units = append(units, m.Bench)
		}
	}
	return units
}

// exactUnits lists the units of exact figures, counted rather than read on
// a clock: the metrics of Kind Exact and every counter's peak that a
// measured repetition of the run has. benchstat reads "Unit ... assume=exact"
// and then reports any difference as one rather than testing it as noise.
func exactUnits(run *Run) []string {
	var units []string
	for _, m := range metrics {
		if m.Bench != "" && m.Kind == Exact {
			units = append(units, m.Bench)
		}
	}
	counters := map[string]bool{}
	for i := range run.Scenarios {
		for j := range run.Scenarios[i].Repetitions {
			if r := &run.Scenarios[i].Repetitions[j]; r.Measured() {
				for k := range r.PeakCounters {
					counters[k] = true
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(counters)) {
		units = append(units, CounterUnit(k))
	}
	return units
}

// writeUnits writes one "Unit UNIT key=value" line for each unit.
func writeUnits(bw *benchfmt.Writer, key, value string, units []string) error {
	for _, unit := range units {
		meta := &benchfmt.UnitMetadata{
			UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: unit, Key: key},
			OrigUnit:        unit,
			Value:           value,
		}
		if err := bw.Write(meta); err != nil {
			return fmt.Errorf("write benchmark units: %w", err)
		}
	}
	return nil
}

// WriteBenchfmt writes the run in the Go benchmark format that benchstat
// reads: one line per measured repetition (finished, not a warm-up), named
// BenchmarkProvebench/<scenario>-<GOMAXPROCS>, with Iters the number of
// proofs the repetition completed (its per-proof figure is an average over
// them).
//
// The file-level configuration holds only what defines the measurement:
// goos, goarch, cpu, gpu and backend, and "simulated: true" for a simulated
// document's predictions. benchstat puts results with different file
// configurations in different tables, so volatile facts (host name,
// commit, start time) are left out: with them a baseline and a new run
// would never be compared. Predictions, for the same reason, are never
// pooled with or compared against measurements unless asked to
// (benchstat -ignore simulated).
func WriteBenchfmt(w io.Writer, run *Run) error {
	bw := benchfmt.NewWriter(w)
	if err := writeUnits(bw, "better", "higher", higherIsBetter()); err != nil {
		return err
	}
	if err := writeUnits(bw, "assume", "exact", exactUnits(run)); err != nil {
		return err
	}
	for i := range run.Scenarios {
		sc := &run.Scenarios[i]
		// A merge of shards can hold several hosts: each configuration's.
		env := run.ScenarioEnvironment(i)
		name := BenchmarkBase + "/" + BenchmarkName(sc.Name, env.GOMAXPROCS)
		config := fileConfig(env, gpuNames(env.GPUs), sc.Backend, run.Simulated != nil)
		for j := range sc.Repetitions {
			r := &sc.Repetitions[j]
			if !r.Measured() {
				continue
			}
			res := &benchfmt.Result{Config: config, Name: benchfmt.Name(name), Iters: max(r.Proofs, 1)}
			res.Values = benchValues(r)
			if err := bw.Write(res); err != nil {
				return fmt.Errorf("write benchmark line for %s repetition %d: %w", sc.Name, r.Index, err)
			}
		}
	}
	return nil
}

// WriteBenchfmtFile writes the run's Go benchmark format to path atomically.
func WriteBenchfmtFile(path string, run *Run) error {
	var buf bytes.Buffer
	if err := WriteBenchfmt(&buf, run); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return WriteFile(path, buf.Bytes())
}

// BenchmarkName turns a scenario name into one sub-benchmark name part that
// benchstat reads back as written: white space becomes "_" (as go test
// does), "/" (a sub-benchmark separator) becomes "_", "=" (which would make
// the part a key=value pair) becomes ":", and gomaxprocs, when known, is
// appended as "-N". Without it a trailing "-<digits>" in the name would be
// taken for GOMAXPROCS, so its dash becomes "_".
func BenchmarkName(scenario string, gomaxprocs int) string {
	var b strings.Builder
	for _, r := range scenario {
		switch {
		case unicode.IsSpace(r) || r == '/' || !unicode.IsPrint(r):
			b.WriteByte('_')
		case r == '=':
			b.WriteByte(':')
		default:
			b.WriteRune(r)
		}
	}
	name := b.String()
	if name == "" {
		name = "_"
	}
	if gomaxprocs > 0 {
		return name + "-" + strconv.Itoa(gomaxprocs)
	}
	if i := strings.LastIndexByte(name, '-'); i >= 0 && i < len(name)-1 &&
		strings.Trim(name[i+1:], "0123456789") == "" {
		name = name[:i] + "_" + name[i+1:]
	}
	return name
}

// benchValues are a repetition's figures: every metric of the table with
// a benchmark unit that the repetition has (an absent one is left out,
// not written as 0), each device stage's time, each counter's peak.
func benchValues(r *Repetition) []benchfmt.Value {
	var vals []benchfmt.Value
	for _, m := range metrics {
		if m.Bench == "" {
			continue
		}
		if v, ok := m.Value(r); ok {
			vals = append(vals, benchfmt.Value{Value: m.BenchValue(v), Unit: m.Bench})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.DeviceStageSeconds)) {
		vals = append(vals, benchfmt.Value{Value: r.DeviceStageSeconds[k], Unit: DeviceStageUnit(k)})
	}
	for _, k := range slices.Sorted(maps.Keys(r.PeakCounters)) {
		vals = append(vals, benchfmt.Value{Value: float64(r.PeakCounters[k]), Unit: CounterUnit(k)})
	}
	return vals
}

// DeviceStageUnit is the benchmark unit of a device stage's time per
// partition: ntt_region -> device-ntt_region-sec/partition.
func DeviceStageUnit(stage string) string { return "device-" + stage + "-sec/partition" }

// CounterUnit is the benchmark unit of a counter's peak: "peak-<name>", with
// a byte counter's "_bytes" suffix written as "-B" so that benchstat scales
// it (abc_bytes -> peak-abc-B, in_channel -> peak-in_channel).
func CounterUnit(counter string) string {
	if base, ok := strings.CutSuffix(counter, "_bytes"); ok {
		return "peak-" + base + "-B"
	}
	return "peak-" + counter
}

// fileConfig is the file-level configuration of a scenario's lines, in a
// fixed key order; an unknown value is written as "unknown" (an empty one
// would delete the key).
func fileConfig(env *Environment, gpus, backend string, simulated bool) []benchfmt.Config {
	var config []benchfmt.Config
	add := func(key, value string) {
		if value == "" {
			value = "unknown"
		}
		config = append(config, benchfmt.Config{Key: key, Value: []byte(value), File: true})
	}
	add("goos", env.OS)
	add("goarch", env.Arch)
	add("cpu", env.CPUModel)
	if gpus != "" { // known only with NVML
		add("gpu", gpus)
	}
	add("backend", backend)
	if simulated {
		add("simulated", "true")
	}
	return config
}

// gpuNames lists the host's distinct GPU models, in device order.
func gpuNames(gpus []GPU) string {
	var names []string
	for _, g := range gpus {
		if !slices.Contains(names, g.Name) {
			names = append(names, g.Name)
		}
	}
	return strings.Join(names, ", ")
}
