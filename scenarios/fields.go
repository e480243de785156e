package scenarios

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/provebench/provebench/gpu/catalog"
	"github.com/provebench/provebench/gpu/shape"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/spec"
)

// kind is how a field's value is written and parsed.
type kind int

const (
	kindInt         kind = iota // a decimal integer
	kindUint                    // a decimal integer in 0..2^64-1
	kindConstraints             // a power of two, as an integer or 2^k
	kindSize                    // bytes: see ParseSize
	kindDuration                // Go's time.ParseDuration forms
	kindBool                    // true or false
	kindFloat                   // a finite number
	kindEnum                    // one of field.enum
	kindString                  // any text (a user variable)
	kindExec                    // the exec block (see exec.go), parsed whole
)

// bound is an optional limit on a numeric field, in the field's own unit
// (seconds for durations). Only lower bounds are ever exclusive.
type bound struct {
	set       bool
	v         float64
	exclusive bool
}

func atLeast(v float64) bound     { return bound{set: true, v: v} }
func greaterThan(v float64) bound { return bound{set: true, v: v, exclusive: true} }
func atMost(v float64) bound      { return bound{set: true, v: v} }

// field is one setting a scenario can write. The table of fields is the
// single definition of the format: the loader walks it, the JSON Schema is
// generated from it, and the built-in defaults are part of it.
type field struct {
	// path is the field's dotted place under a settings block, such as
	// pipeline.pacer.kp. The segments before the last name its groups.
	path string
	kind kind
	doc  string
	// def is the built-in default, written as a user would write it; it is
	// parsed and checked like user input.
	def    string
	enum   []string
	lo, hi bound
	// set stores the parsed value (int64, uint64, time.Duration, bool,
	// float64 or string, by kind) into a spec; get reads it back, for
	// writing a spec as a scenario file (Marshal).
	set func(s *spec.Spec, v any)
	get func(s *spec.Spec) any
}

// groupDocs describes the groups of fields, for the JSON Schema.
var groupDocs = map[string]string{
	"workload":       "What a repetition proves: Proofs proofs, Concurrency of them in flight at once, each of Partitions partitions of Constraints constraints.",
	"pipeline":       "The pipeline's admission strategy and its knobs.",
	"pipeline.pacer": "The pacer strategy's feedback controller.",
	"simulate":       "Read by provebench simulate only: one partition's stage costs, written directly for systems provebench cannot run (0: from --calibration), and the host to simulate on.",
	"simulate.host":  "The host simulated on (0: the calibration host's figures).",
}

// fields is the format: every setting of defaults, scenarios and matrix
// bases, in the order the schema lists them.
var fields = []*field{
	{
		path: "backend", kind: kindEnum, def: catalog.CPU,
		enum: catalog.Names(),
		doc:  "Prover backend: " + catalog.Doc() + ".",
		set:  func(s *spec.Spec, v any) { s.Backend = v.(string) },
		get:  func(s *spec.Spec) any { return string(s.Backend) },
	},
	{
		path: "devices", kind: kindInt, def: "0", lo: atLeast(0),
		doc: "Number of devices to use; 0 means all.",
		set: func(s *spec.Spec, v any) { s.Devices = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Devices) },
	},
	{
		path: "key", kind: kindEnum, def: string(shape.KindAuto),
		enum: []string{string(shape.KindSetup), string(shape.KindRandom), string(shape.KindAuto)},
		doc: fmt.Sprintf("Proving key: setup (a real Groth16 setup: proofs verify; at most 2^%d constraints), "+
			"random (a benchmark key of the same shape: proving costs the same, proofs do not verify), "+
			"or auto (setup up to 2^%d constraints, random above). The loader resolves auto.",
			log2(maxSetupConstraints), log2(shape.AutoSetupMax)),
		set: func(s *spec.Spec, v any) { s.Key = shape.KeyKind(v.(string)) },
		get: func(s *spec.Spec) any { return string(s.Key) },
	},
	{
		path: "verify", kind: kindBool, def: "true",
		doc: "Verify every proof. Applies to setup keys only: proofs made with a random key cannot verify, so the loader turns verify off for them.",
		set: func(s *spec.Spec, v any) { s.Verify = v.(bool) },
		get: func(s *spec.Spec) any { return bool(s.Verify) },
	},
	{
		path: "repeats", kind: kindInt, def: "5", lo: atLeast(1),
		doc: "Measured repetitions, each in its own child process (5 by default: the fewest with which compare's Mann-Whitney U test can call a change significant, which needs 4 a side; ab measures at least 10 pairs).",
		set: func(s *spec.Spec, v any) { s.Repeats = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Repeats) },
	},
	{
		path: "warmups", kind: kindInt, def: "1", lo: atLeast(0),
		doc: "Repetitions run and discarded before the measured ones.",
		set: func(s *spec.Spec, v any) { s.Warmups = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Warmups) },
	},
	{
		path: "sample_interval", kind: kindDuration, def: "10ms", lo: atLeast(time.Millisecond.Seconds()),
		doc: "Period of the memory, GPU and counter samplers (a Go duration such as 10ms).",
		set: func(s *spec.Spec, v any) { s.SampleInterval = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.SampleInterval) },
	},
	{
		path: "timeout", kind: kindDuration, def: "10m", lo: greaterThan(0),
		doc: "Limit on one repetition's wall time (a Go duration such as 10m); a repetition that runs past it is stopped and recorded as failed.",
		set: func(s *spec.Spec, v any) { s.Timeout = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Timeout) },
	},
	{
		path: "memory_limit", kind: kindSize, def: "0",
		doc: "RSS above which a repetition is stopped and recorded as failed (such as 16GiB); 0 means no limit.",
		set: func(s *spec.Spec, v any) { s.MemoryLimit = v.(int64) },
		get: func(s *spec.Spec) any { return int64(s.MemoryLimit) },
	},
	{
		path: "measure", kind: kindEnum, def: spec.MeasureWarm,
		enum: []string{spec.MeasureWarm, spec.MeasureCold},
		doc:  "When a repetition's clock starts. warm (the default): once the prover is ready, as in a proving daemon: key resident on the device, page-locked dataset memory reserved, one warm-up partition proved on every device. cold: right after the key is loaded, so the first partitions pay the device's first use and per-dataset page-locking. Setup is timed apart either way (setup_seconds).",
		set:  func(s *spec.Spec, v any) { s.Measure = v.(string) },
		get:  func(s *spec.Spec) any { return s.Measure },
	},

	{
		path: "workload.constraints", kind: kindConstraints, def: "2^14",
		doc: fmt.Sprintf("Constraints per partition (the domain size): a power of two from 2^%d to 2^%d, written as 2^k or an integer. A 32 GiB PoRep partition is 2^27.",
			shape.MinLogConstraints, shape.MaxLogConstraints),
		set: func(s *spec.Spec, v any) { s.Workload.Constraints = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Workload.Constraints) },
	},
	{
		path: "workload.partitions", kind: kindInt, def: "4", lo: atLeast(1),
		doc: "Partitions per proof (PoRep C2: 10).",
		set: func(s *spec.Spec, v any) { s.Workload.Partitions = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Workload.Partitions) },
	},
	{
		path: "workload.proofs", kind: kindInt, def: "2", lo: atLeast(1),
		doc: "Proofs per repetition.",
		set: func(s *spec.Spec, v any) { s.Workload.Proofs = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Workload.Proofs) },
	},
	{
		path: "workload.concurrency", kind: kindInt, def: "1", lo: atLeast(1),
		doc: "Proofs in flight at once; more than proofs means all of them.",
		set: func(s *spec.Spec, v any) { s.Workload.Concurrency = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Workload.Concurrency) },
	},
	{
		path: "workload.synthesis_rounds", kind: kindInt, def: "4", lo: atLeast(0), hi: atMost(shape.MaxRounds),
		doc: "Synthesis cost: rounds of the x^5+c S-box per constraint (CPU work per partition grows linearly with it; proving cost does not change).",
		set: func(s *spec.Spec, v any) { s.Workload.SynthesisRounds = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Workload.SynthesisRounds) },
	},
	{
		path: "workload.bit_fraction", kind: kindFloat, def: "0.5",
		lo: atLeast(float64(shape.MinBitsPerMille) / 1000), hi: atMost(float64(shape.MaxBitsPerMille) / 1000),
		doc: "Share of the private wires that are bits (PoRep circuits are bit-heavy). Provers sum the bits' points as batch additions and run full MSMs over the rest only, so it sets the MSM mix; B has terms only for bits.",
		set: func(s *spec.Spec, v any) { s.Workload.BitFraction = v.(float64) },
		get: func(s *spec.Spec) any { return float64(s.Workload.BitFraction) },
	},
	{
		path: "workload.synthesis", kind: kindEnum, def: config.SynthesisCompute, enum: config.SynthesisModes,
		doc: "How partitions are synthesized. compute (the default): the circuit's synthesis, whose cost synthesis_rounds sets. cached: one witness is synthesized before the run and every partition copies it into its own freshly allocated dataset (same allocations, page-locking, sizes and lifetimes, none of the arithmetic), so synthesis outruns the GPU: the GPU-bound regime, on a host whose CPUs would otherwise hold the GPU back.",
		set: func(s *spec.Spec, v any) { s.Workload.Synthesis = v.(string) },
		get: func(s *spec.Spec) any { return s.Workload.Synthesis },
	},
	{
		path: "workload.seed", kind: kindUint, def: "1",
		doc: "Base seed of the witnesses; every partition of every proof derives its own from it.",
		set: func(s *spec.Spec, v any) { s.Workload.Seed = v.(uint64) },
		get: func(s *spec.Spec) any { return uint64(s.Workload.Seed) },
	},

	{
		path: "pipeline.strategy", kind: kindEnum, def: string(config.Release), enum: config.StrategyNames(),
		doc: "Admission strategy: the gates a partition passes before synthesis, joined by + (such as budget+pacer, as cuzk's final engine). Gates: " +
			config.Registered().Doc() + "; synthesis_workers caps synthesis under every strategy.",
		set: func(s *spec.Spec, v any) { s.Pipeline.Strategy = config.Strategy(v.(string)) },
		get: func(s *spec.Spec) any { return string(s.Pipeline.Strategy) },
	},
	{
		path: "pipeline.partition_workers", kind: kindInt, def: "4", lo: atLeast(0),
		doc: "Partition permits (pw) of the release and hold strategies; at least 1 for them.",
		set: func(s *spec.Spec, v any) { s.Pipeline.PartitionWorkers = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Pipeline.PartitionWorkers) },
	},
	{
		path: "pipeline.channel_capacity", kind: kindInt, def: "1", lo: atLeast(1),
		doc: "Capacity (C) of the channel from synthesis to the GPU workers; at least 1, as in cuzk.",
		set: func(s *spec.Spec, v any) { s.Pipeline.ChannelCapacity = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Pipeline.ChannelCapacity) },
	},
	{
		path: "pipeline.early_free", kind: kindBool, def: "false",
		doc: "Free a/b/c right after the NTT region instead of when the partition is done.",
		set: func(s *spec.Spec, v any) { s.Pipeline.EarlyFree = v.(bool) },
		get: func(s *spec.Spec) any { return bool(s.Pipeline.EarlyFree) },
	},
	{
		path: "pipeline.gpu_workers", kind: kindInt, def: "1", lo: atLeast(1),
		doc: "GPU workers per device.",
		set: func(s *spec.Spec, v any) { s.Pipeline.GPUWorkers = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Pipeline.GPUWorkers) },
	},
	{
		path: "pipeline.synthesis_workers", kind: kindInt, def: "0", lo: atLeast(0),
		doc: "Cap on partitions synthesizing at once, whatever the strategy; 0 means partition_workers for release and hold, GOMAXPROCS for budget and pacer.",
		set: func(s *spec.Spec, v any) { s.Pipeline.SynthesisWorkers = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Pipeline.SynthesisWorkers) },
	},
	{
		path: "pipeline.budget", kind: kindSize, def: "256MiB",
		doc: "Byte budget of the budget strategy (such as 8GiB): live dataset bytes never exceed it. It must hold at least one partition's dataset.",
		set: func(s *spec.Spec, v any) { s.Pipeline.Budget = v.(int64) },
		get: func(s *spec.Spec) any { return int64(s.Pipeline.Budget) },
	},
	{
		path: "pipeline.pacer.target_depth", kind: kindFloat, def: formatFloat(config.DefaultTargetDepth), lo: greaterThan(0),
		doc: "GPU queue depth (partitions synthesized and not yet taken by a GPU worker) the controller holds.",
		set: func(s *spec.Spec, v any) { s.Pipeline.Pacer.TargetDepth = v.(float64) },
		get: func(s *spec.Spec) any { return float64(s.Pipeline.Pacer.TargetDepth) },
	},
	{
		path: "pipeline.pacer.kp", kind: kindFloat, def: formatFloat(config.DefaultKp), lo: atLeast(0),
		doc: "Proportional gain, per partition of depth error. Kp and ki cannot both be 0: a controller without feedback cannot hold its target.",
		set: func(s *spec.Spec, v any) { s.Pipeline.Pacer.Kp = v.(float64) },
		get: func(s *spec.Spec) any { return float64(s.Pipeline.Pacer.Kp) },
	},
	{
		path: "pipeline.pacer.ki", kind: kindFloat, def: formatFloat(config.DefaultKi), lo: atLeast(0),
		doc: "Integral gain, per partition of depth error sustained for one GPU service interval.",
		set: func(s *spec.Spec, v any) { s.Pipeline.Pacer.Ki = v.(float64) },
		get: func(s *spec.Spec) any { return float64(s.Pipeline.Pacer.Ki) },
	},
	{
		path: "pipeline.pacer.interval", kind: kindDuration, def: config.DefaultPacerInterval.String(), lo: atLeast(config.MinPacerInterval.Seconds()),
		doc: "Control period: how often the controller samples the queue and sets the admission rate (a Go duration such as 20ms).",
		set: func(s *spec.Spec, v any) { s.Pipeline.Pacer.Interval = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Pipeline.Pacer.Interval) },
	},
	{
		path: "pipeline.pacer.max_in_flight", kind: kindInt, def: "0", lo: atLeast(0),
		doc: "Cap on partitions admitted and not yet taken by a GPU worker, whatever the controller says; it must exceed target_depth. 0 means the synthesis workers plus twice the target depth, rounded up.",
		set: func(s *spec.Spec, v any) { s.Pipeline.Pacer.MaxInFlight = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Pipeline.Pacer.MaxInFlight) },
	},
	{
		path: "simulate.synthesis", kind: kindDuration, def: "0s", lo: atLeast(0),
		doc: "Synthesis time of one partition with the cores to itself.",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.Synthesis = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Simulate.Stages.Synthesis) },
	},
	{
		path: "simulate.synthesis_spread", kind: kindDuration, def: "0s", lo: atLeast(0),
		doc: "Each partition's synthesis time is drawn uniformly from synthesis ± this (such as 45s ± 10s for 35-55 s).",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.SynthesisSpread = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Simulate.Stages.SynthesisSpread) },
	},
	{
		path: "simulate.gpu_start", kind: kindDuration, def: "0s", lo: atLeast(0),
		doc: "GPU time of Backend.Start: uploads and the NTT region, after which a/b/c may be freed.",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.GPUStart = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Simulate.Stages.GPUStart) },
	},
	{
		path: "simulate.upload", kind: kindDuration, def: "0s", lo: atLeast(0),
		doc: "Part of Backend.Start that copies the dataset to the device: it holds the GPU worker, not the device (the copy engine overlaps compute).",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.Upload = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Simulate.Stages.Upload) },
	},
	{
		path: "simulate.pageable_upload", kind: kindDuration, def: "0s", lo: atLeast(0),
		doc: "Upload of a dataset from ordinary (pageable) memory, outside simulate.host.pooled_bytes (every dataset when there is no pool): the driver copies it through its staging buffer in the device's stream, so it holds a serial device instead of overlapping its compute. 0: simulate.upload.",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.PageableUpload = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Simulate.Stages.PageableUpload) },
	},
	{
		path: "simulate.finalize", kind: kindDuration, def: "0s", lo: atLeast(0),
		doc: "Time from Start's return to the proof: the MSMs and assembly.",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.Finalize = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Simulate.Stages.Finalize) },
	},
	{
		path: "simulate.abc_bytes", kind: kindSize, def: "0",
		doc: "Bytes of one partition's a/b/c vectors.",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.ABCBytes = v.(int64) },
		get: func(s *spec.Spec) any { return int64(s.Simulate.Stages.ABCBytes) },
	},
	{
		path: "simulate.wire_bytes", kind: kindSize, def: "0",
		doc: "Bytes of one partition's wire assignment.",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.WireBytes = v.(int64) },
		get: func(s *spec.Spec) any { return int64(s.Simulate.Stages.WireBytes) },
	},
	{
		path: "simulate.synthesis_bytes", kind: kindSize, def: "0",
		doc: "Bytes a partition holds while it synthesizes (0: its whole dataset).",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.SynthesisBytes = v.(int64) },
		get: func(s *spec.Spec) any { return int64(s.Simulate.Stages.SynthesisBytes) },
	},
	{
		path: "simulate.device_serial", kind: kindBool, def: "false",
		doc: "A device runs one phase at a time, Start (gpu_start) or finalize, in arrival order, as a GPU stream does; the costs are then device time without queueing. Otherwise every phase runs at once.",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.DeviceSerial = v.(bool) },
		get: func(s *spec.Spec) any { return bool(s.Simulate.Stages.DeviceSerial) },
	},
	{
		path: "simulate.submit_queue", kind: kindInt, def: "0", lo: atLeast(0),
		doc: "With device_serial: Start takes one of this many slots, uploads and returns, and the device runs the NTT region and the MSMs later (the CUDA backend, 1); 0: Start returns after the NTT region (the CPU backend).",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.SubmitQueue = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Simulate.Stages.SubmitQueue) },
	},
	{
		path: "simulate.device_ready", kind: kindDuration, def: "0s", lo: atLeast(0),
		doc: "No partition's Start completes before this time from the pipeline's start: the backend's first-use costs (on the CUDA backend about 8 s at 2^24 on the H200).",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.DeviceReady = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Simulate.Stages.DeviceReady) },
	},
	{
		path: "simulate.pin_stall", kind: kindDuration, def: "0s", lo: atLeast(0),
		doc: "A partition that starts synthesis holds up a busy serial device this long (on the CUDA backend: page-locking its dataset).",
		set: func(s *spec.Spec, v any) { s.Simulate.Stages.PinStall = v.(time.Duration) },
		get: func(s *spec.Spec) any { return time.Duration(s.Simulate.Stages.PinStall) },
	},
	{
		path: "simulate.host.memory", kind: kindSize, def: "0",
		doc: "Host memory: a configuration whose predicted RSS passes it is reported out of memory.",
		set: func(s *spec.Spec, v any) { s.Simulate.Host.Memory = v.(int64) },
		get: func(s *spec.Spec) any { return int64(s.Simulate.Host.Memory) },
	},
	{
		path: "simulate.host.baseline", kind: kindSize, def: "0",
		doc: "RSS before any dataset: runtime and proving key.",
		set: func(s *spec.Spec, v any) { s.Simulate.Host.Baseline = v.(int64) },
		get: func(s *spec.Spec) any { return int64(s.Simulate.Host.Baseline) },
	},
	{
		path: "simulate.host.pooled_bytes", kind: kindSize, def: "0",
		doc: "Page-locked memory reserved before the run that datasets are allocated in (the CUDA backend's warm start): a dataset in it adds nothing to the RSS and uploads at simulate.upload's pace; one beyond it adds its bytes and uploads at simulate.pageable_upload's.",
		set: func(s *spec.Spec, v any) { s.Simulate.Host.PooledBytes = v.(int64) },
		get: func(s *spec.Spec) any { return int64(s.Simulate.Host.PooledBytes) },
	},
	{
		path: "simulate.host.cores", kind: kindInt, def: "0", lo: atLeast(0),
		doc: "Partitions that synthesize at full speed at once; more share the cores.",
		set: func(s *spec.Spec, v any) { s.Simulate.Host.Cores = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Simulate.Host.Cores) },
	},
	{
		path: "simulate.host.synthesis_contention", kind: kindFloat, def: "0", lo: atLeast(0),
		doc: "How much each other partition synthesizing at once slows one: k at once each take 1 + this·(k-1) times as long (memory bandwidth), before sharing the cores.",
		set: func(s *spec.Spec, v any) { s.Simulate.Host.SynthesisContention = v.(float64) },
		get: func(s *spec.Spec) any { return float64(s.Simulate.Host.SynthesisContention) },
	},
	{
		path: "simulate.host.devices", kind: kindInt, def: "0", lo: atLeast(0),
		doc: "Number of GPUs.",
		set: func(s *spec.Spec, v any) { s.Simulate.Host.Devices = int(v.(int64)) },
		get: func(s *spec.Spec) any { return int64(s.Simulate.Host.Devices) },
	},
	{
		path: "simulate.host.gpu_speed", kind: kindFloat, def: "0", lo: atLeast(0),
		doc: "GPU speed relative to the calibration's (2: twice as fast).",
		set: func(s *spec.Spec, v any) { s.Simulate.Host.GPUSpeed = v.(float64) },
		get: func(s *spec.Spec) any { return float64(s.Simulate.Host.GPUSpeed) },
	},
}

// maxSetupConstraints is the largest domain a scenario may ask a real setup
// for: a setup costs a scalar multiplication per key point, which is hours
// beyond 2^20 on a workstation. Larger sizes use a random key.
const maxSetupConstraints = 1 << 20

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func log2(n int) int { return shape.Params{Constraints: n}.LogConstraints() }

// parse reads a scalar as the field's kind and checks it against the
// field's own limits (limits that depend on other fields are checked once a
// scenario is resolved).
func (f *field) parse(text string) (any, error) {
	switch f.kind {
	case kindInt:
		return f.intValue(text)
	case kindUint:
		return uintValue(text)
	case kindConstraints:
		return constraintsValue(text)
	case kindSize:
		return f.sizeValue(text)
	case kindDuration:
		return f.durationValue(text)
	case kindBool:
		return boolValue(text)
	case kindFloat:
		return f.floatValue(text)
	case kindEnum:
		return f.enumValue(text)
	case kindString:
		return text, nil
	}
	panic(fmt.Sprintf("scenarios: field %s has unknown kind %d", f.path, f.kind))
}

func (f *field) intValue(text string) (any, error) {
	n, err := strconv.ParseInt(text, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("%s is too large for an integer (at most %d)", text, int64(math.MaxInt64))
	}
	if err != nil {
		return nil, fmt.Errorf("%q: want an integer", text)
	}
	return n, f.inBounds(float64(n), text)
}

func uintValue(text string) (any, error) {
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%q: want an integer from 0 to 2^64-1", text)
	}
	return n, nil
}

// constraintsValue reads a constraint count. A 2^k outside the circuit's
// range is refused with the range before the count is parsed, so that it
// gets this message rather than the circuit's.
func constraintsValue(text string) (any, error) {
	if k, ok := pow2Exponent(text); ok && (k < shape.MinLogConstraints || k > shape.MaxLogConstraints) {
		return nil, fmt.Errorf("%s: constraints must be a power of two from 2^%d to 2^%d", text, shape.MinLogConstraints, shape.MaxLogConstraints)
	}
	n, err := ParseCount(text)
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("%s: constraints must be a power of two from 2^%d to 2^%d", text, shape.MinLogConstraints, shape.MaxLogConstraints)
	}
	if err != nil {
		return nil, err
	}
	if err := (shape.Params{Constraints: int(n)}).Validate(); err != nil {
		return nil, err
	}
	return n, nil
}

func (f *field) sizeValue(text string) (any, error) {
	n, err := ParseSize(text)
	if err != nil {
		return nil, err
	}
	return n, f.inBounds(float64(n), text)
}

func (f *field) durationValue(text string) (any, error) {
	d, err := time.ParseDuration(text)
	if err != nil {
		return nil, fmt.Errorf("%q: want a duration such as 500ms, 10s or 1m30s", text)
	}
	return d, f.inBounds(d.Seconds(), text)
}

// boolValue reads the spellings of YAML 1.2's core schema; YAML 1.1's yes,
// no, on and off are refused rather than guessed at.
func boolValue(text string) (any, error) {
	switch text {
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	return nil, fmt.Errorf("%q: want true or false", text)
}

func (f *field) floatValue(text string) (any, error) {
	x, err := parseFloat(text)
	if err != nil {
		return nil, err
	}
	return x, f.inBounds(x, text)
}

func (f *field) enumValue(text string) (any, error) {
	if slices.Contains(f.enum, text) {
		return text, nil
	}
	return nil, fmt.Errorf("%q: want one of %s", text, strings.Join(f.enum, ", "))
}

// inBounds checks x, written as text, against the field's limits.
func (f *field) inBounds(x float64, text string) error {
	if b := f.lo; b.set && (x < b.v || b.exclusive && x == b.v) {
		if b.exclusive {
			return fmt.Errorf("%s: must be greater than %s", text, f.format(b.v))
		}
		return fmt.Errorf("%s is below the minimum %s", text, f.format(b.v))
	}
	if b := f.hi; b.set && x > b.v {
		return fmt.Errorf("%s is above the maximum %s", text, f.format(b.v))
	}
	return nil
}

// format writes a limit in the field's unit.
func (f *field) format(v float64) string {
	if f.kind == kindDuration {
		return time.Duration(v * float64(time.Second)).String()
	}
	return formatFloat(v)
}

// fieldByPath returns the field at a dotted path, or nil.
func fieldByPath(path string) *field {
	for _, f := range fields {
		if f.path == path {
			return f
		}
	}
	return nil
}

// childNames lists the names directly under a group ("" is the top of a
// settings block): its fields and its sub-groups.
func childNames(group string) []string {
	prefix := ""
	if group != "" {
		prefix = group + "."
	}
	var names []string
	seen := make(map[string]bool)
	for _, f := range fields {
		rest, ok := strings.CutPrefix(f.path, prefix)
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, ".")
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}

// belongsUnder returns the group a name belongs under when it is written
// in group but is a field or sub-group of another one (strategy written in
// workload belongs under pipeline); "" when it is nowhere or ambiguous.
func belongsUnder(group, name string) string {
	where := ""
	for _, f := range fields {
		segs := strings.Split(f.path, ".")
		for i, seg := range segs {
			if seg != name {
				continue
			}
			parent := strings.Join(segs[:i], ".")
			if parent == group {
				return "" // it does belong here: not this function's case
			}
			if where != "" && where != parent {
				return "" // in several groups: no one answer
			}
			where = parent
		}
	}
	if where == "" {
		return "" // a top-level field is found by fieldByPath, not here
	}
	return where
}

// leafPaths lists the paths of the fields under a group ("" for all).
func leafPaths(group string) []string {
	var paths []string
	for _, f := range fields {
		if group == "" || strings.HasPrefix(f.path, group+".") {
			paths = append(paths, f.path)
		}
	}
	return paths
}
