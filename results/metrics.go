package results

import (
	"fmt"
	"math"
	"slices"

	"github.com/provebench/provebench/internal/units"
)

// The metric table: every figure of a repetition that a reader compares,
// keeps, exports or writes out, defined once. compare and ab, the
// history, the report, the dashboards' exports, the CSV and the Go
// benchmark format all read it, as x/perf's readers all read benchfmt's
// Value{Value, Unit}; none of them holds a metric of its own. A figure
// reaches every reader it should through one entry in metrics below, plus
// its measurement (the Repetition field the entry reads).

// Metric names: the figures' JSON names in the results document (for a
// derived figure, the name compare and the history give it). A name is
// the CSV column, the history's metric and the key of --threshold and
// --metric alike.
const (
	SecondsPerProof           = "seconds_per_proof"
	PartitionsPerSecond       = "partitions_per_second"
	WallSeconds               = "wall_seconds"
	ProcessSeconds            = "process_seconds"
	DeviceSecondsPerPartition = "device_seconds_per_partition"
	PeakRSSBytes              = "peak_rss_bytes"
	PeakRSSSampledBytes       = "peak_rss_sampled_bytes"
	PeakAnonBytes             = "peak_anon_bytes"
	PeakGPUMemoryBytes        = "peak_gpu_memory_bytes"
	PeakGPUDeviceMemoryBytes  = "peak_gpu_device_memory_bytes"
	MeanGPUUtilization        = "mean_gpu_utilization"
	DeviceBusyFraction        = "device_busy_fraction"
	SteadyDeviceBusyFraction  = "steady_device_busy_fraction"
	CPUSeconds                = "cpu_seconds"
	CPUUserSeconds            = "cpu_user_seconds"
	CPUSystemSeconds          = "cpu_system_seconds"
	MinorFaults               = "minor_faults"
	MajorFaults               = "major_faults"
	SetupSeconds              = "setup_seconds"
	EnergyJoules              = "energy_joules"
	JoulesPerProof            = "joules_per_proof"
	FailedRepetitions         = "failed_repetitions"
	FailedPartitions          = "failed_partitions"
	UnverifiedProofs          = "unverified_proofs"
)

// Unit is how a metric's values read: the one spelling every reader
// shows. A format with conventions of its own maps from it (the Go
// benchmark format's units are Metric.Bench).
type Unit string

// Units.
const (
	UnitSecond        Unit = "s"
	UnitPartitionRate Unit = "partitions/s"
	UnitByte          Unit = "B"
	UnitFraction      Unit = "fraction"
	UnitCount         Unit = "count"
	UnitJoule         Unit = "J"
)

// Direction says which way a metric improves.
type Direction int

// Directions.
const (
	LowerIsBetter  Direction = -1
	HigherIsBetter Direction = +1
)

// Kind says how a metric is measured, which decides where a change in it
// can gate.
type Kind string

// Kinds.
const (
	// Exact figures are counted, not read on a clock: failures,
	// unverified proofs, page faults. The count is the code's; stored runs
	// gate on them by default.
	Exact Kind = "exact"
	// Timed figures are read on a clock or shaped by the run's timing, as
	// memory peaks are (how far synthesis runs ahead of the GPU): they
	// move with what else the host does, so they gate where both sides
	// ran side by side (ab), or when asked to.
	Timed Kind = "timed"
)

// Clock is the clock a timed figure is read on, where a verdict depends
// on it.
type Clock string

// Clocks.
const (
	// WallClock is the host's wall time: every other job on the machine
	// slows it, so ab judges it on the pairs measured while the host was
	// quiet.
	WallClock Clock = "wall"
	// CPUClock is the process's CPU time: it moves far less with the
	// neighbours than wall time does.
	CPUClock Clock = "cpu"
	// DeviceClock is the device's own clock (CUDA events): the host's load
	// does not move it, so stored runs gate on it by default. On the CPU
	// backend the "device" is the host's CPUs and this is wall time.
	DeviceClock Clock = "device"
)

// Readers says which readers take a metric beyond the CSV (every figure
// the document stores) and the Go benchmark format (every figure with a
// Bench unit).
type Readers uint8

// Readers.
const (
	// Compared metrics are judged by compare and ab.
	Compared Readers = 1 << iota
	// Tracked metrics are kept by the history across commits.
	Tracked
	// Exported metrics go to benchmark dashboards (reports/export).
	Exported
)

// off is the threshold of a metric reported without gating (+Inf:
// no change passes it); readers ask Metric.Gated.
var off = math.Inf(1)

// Metric is one figure of a repetition as every reader takes it.
type Metric struct {
	// Name is the figure's name (see the constants above).
	Name string
	// Label names the figure for people, in a sentence or on an axis
	// ("seconds per proof"); Heading is its short column heading
	// ("s/proof").
	Label, Heading string
	Unit           Unit
	Better         Direction
	Kind           Kind
	// Clock is the clock a timed figure is read on where a verdict
	// depends on it; empty where none does (memory peaks, energy).
	Clock Clock
	// Threshold is the default gate: the relative change in the bad
	// direction beyond which a significant change is a regression; 0
	// fails any increase (failures), +Inf reports without gating.
	Threshold float64
	// Readers are the readers beyond the CSV and the Go benchmark format
	// that take the figure.
	Readers Readers
	// Bench is the figure's unit in the Go benchmark format, empty where
	// it is not written there; BenchScale multiplies the value for it
	// (fractions are written as percentages), 0 meaning 1.
	Bench      string
	BenchScale float64
	// Derived figures are computed from others, not stored in the
	// document: the CSV, which writes what the document holds, leaves
	// them out.
	Derived bool
	// Total figures are judged per configuration as the total over its
	// repetitions, warm-ups aside (one failure is a failure whichever
	// repetition had it), not as a sample of the measured repetitions.
	Total bool
	// Absent says why a repetition may lack the figure.
	Absent string
	// Value is the figure of one repetition; ok is false where the
	// repetition lacks it, which is never read as 0. A figure the document
	// stores as a plain number is absent when 0 where 0 cannot be a
	// measurement (the time of a run, the peak of a process that ran).
	Value func(r *Repetition) (v float64, ok bool)
	// narrow and wide are a figure's two readings where it has two
	// (cpu_seconds: the measured run's own CPU time, which newer
	// documents have, and the whole process's): Value is narrow where a
	// repetition has it, else wide. See Alike.
	narrow, wide func(r *Repetition) (float64, bool)
}

// Why a repetition lacks a figure, where entries share the reason.
const (
	notRecorded  = "not recorded"
	noNVML       = "NVML absent: GPU memory not sampled"
	noDeviceTime = "no device time: the exec driver, no partition done, or a document from before device time was recorded"
	noDeviceBusy = "no device busy time: the exec driver, or a backend that does not report it"
	noStatus     = "no status: not a repetition that ran"
	noFaults     = "no page faults: not readable, or a document from before they were counted"
)

// metrics is the table, in the order readers list metrics.
var metrics = []Metric{
	{Name: SecondsPerProof, Label: "seconds per proof", Heading: "s/proof",
		Unit: UnitSecond, Better: LowerIsBetter, Kind: Timed, Clock: WallClock, Threshold: 0.05,
		Readers: Compared | Tracked | Exported, Bench: UnitSecondsPerProof,
		Absent: notRecorded, Value: nonZero(func(r *Repetition) float64 { return r.SecondsPerProof })},
	{Name: PartitionsPerSecond, Label: "throughput", Heading: "partitions/s",
		Unit: UnitPartitionRate, Better: HigherIsBetter, Kind: Timed, Clock: WallClock, Threshold: 0.05,
		Readers: Compared | Tracked, Bench: UnitPartitionsPerSecond,
		Absent: notRecorded, Value: nonZero(func(r *Repetition) float64 { return r.PartitionsPerSecond })},
	{Name: WallSeconds, Label: "pipeline wall time", Heading: "wall s",
		Unit: UnitSecond, Better: LowerIsBetter, Kind: Timed, Clock: WallClock, Threshold: off,
		Readers: Tracked,
		Absent:  notRecorded, Value: nonZero(func(r *Repetition) float64 { return r.WallSeconds })},
	{Name: ProcessSeconds, Label: "process lifetime", Heading: "process s",
		Unit: UnitSecond, Better: LowerIsBetter, Kind: Timed, Clock: WallClock, Threshold: off,
		Absent: notRecorded, Value: nonZero(func(r *Repetition) float64 { return r.ProcessSeconds })},
	{Name: DeviceSecondsPerPartition, Label: "device time per partition", Heading: "device s/partition",
		Unit: UnitSecond, Better: LowerIsBetter, Kind: Timed, Clock: DeviceClock, Threshold: 0.05,
		Readers: Compared | Tracked, Bench: UnitDevicePerPartition,
		Absent: noDeviceTime, Value: optional(func(r *Repetition) *float64 { return r.DeviceSecondsPerPartition })},
	// The kernel's whole peak counts the binary's own resident pages,
	// which two copies of one build hold in different numbers (the page
	// cache's doing, not the code's): shown everywhere, gated nowhere by
	// default. The work's memory gates as peak_anon_bytes.
	{Name: PeakRSSBytes, Label: "peak RSS", Heading: "peak RSS (kernel)",
		Unit: UnitByte, Better: LowerIsBetter, Kind: Timed, Threshold: off,
		Readers: Compared | Tracked | Exported, Bench: UnitPeakRSS,
		Absent: notRecorded, Value: nonZero(func(r *Repetition) float64 { return float64(r.PeakRSSBytes) })},
	{Name: PeakRSSSampledBytes, Label: "sampled peak RSS", Heading: "peak RSS (sampled)",
		Unit: UnitByte, Better: LowerIsBetter, Kind: Timed, Threshold: off,
		Bench:  UnitPeakRSSSampled,
		Absent: "no RSS sampled", Value: nonZero(func(r *Repetition) float64 { return float64(r.PeakRSSSampledBytes) })},
	{Name: PeakAnonBytes, Label: "peak anonymous memory", Heading: "peak anon (work)",
		Unit: UnitByte, Better: LowerIsBetter, Kind: Timed, Threshold: 0.10,
		Readers: Compared | Tracked | Exported, Bench: "peak-anon-B",
		Absent: "not recorded: the exec driver, or a document from before the work's own peak was measured",
		Value:  optionalBytes(func(r *Repetition) *uint64 { return r.PeakAnonBytes })},
	{Name: PeakGPUMemoryBytes, Label: "peak GPU memory", Heading: "peak GPU memory",
		Unit: UnitByte, Better: LowerIsBetter, Kind: Timed, Threshold: 0.10,
		Readers: Compared | Tracked, Bench: UnitPeakGPU,
		Absent: noNVML, Value: optionalBytes(func(r *Repetition) *uint64 { return r.PeakGPUMemoryBytes })},
	{Name: PeakGPUDeviceMemoryBytes, Label: "peak GPU memory of the device", Heading: "peak GPU memory (device)",
		Unit: UnitByte, Better: LowerIsBetter, Kind: Timed, Threshold: off,
		Bench:  UnitPeakGPUDevice,
		Absent: noNVML, Value: optionalBytes(func(r *Repetition) *uint64 { return r.PeakGPUDeviceMemoryBytes })},
	{Name: MeanGPUUtilization, Label: "GPU utilisation (NVML)", Heading: "GPU utilisation",
		Unit: UnitFraction, Better: HigherIsBetter, Kind: Timed, Threshold: off,
		Absent: "NVML absent: GPU utilisation not sampled", Value: optional(func(r *Repetition) *float64 { return r.MeanGPUUtilization })},
	{Name: DeviceBusyFraction, Label: "device busy", Heading: "device busy",
		Unit: UnitFraction, Better: HigherIsBetter, Kind: Timed, Threshold: off,
		Readers: Compared, Bench: UnitDeviceBusy, BenchScale: 100,
		Absent: noDeviceBusy, Value: optional(func(r *Repetition) *float64 { return r.DeviceBusyFraction })},
	{Name: SteadyDeviceBusyFraction, Label: "device busy in the steady state", Heading: "steady busy",
		Unit: UnitFraction, Better: HigherIsBetter, Kind: Timed, Threshold: off,
		Readers: Compared, Bench: UnitSteadyDeviceBusy, BenchScale: 100,
		Absent: "no steady state: fewer than 5 partitions, or too few samples between 10% and 90% done",
		Value:  optional(func(r *Repetition) *float64 { return r.SteadyDeviceBusyFraction })},
	cpuSeconds(),
	{Name: CPUUserSeconds, Label: "user CPU time", Heading: "user CPU s",
		Unit: UnitSecond, Better: LowerIsBetter, Kind: Timed, Clock: CPUClock, Threshold: off,
		Bench:  UnitCPUUser,
		Absent: "no CPU time recorded", Value: cpuTime(func(r *Repetition) float64 { return r.CPUUserSeconds })},
	{Name: CPUSystemSeconds, Label: "system CPU time", Heading: "system CPU s",
		Unit: UnitSecond, Better: LowerIsBetter, Kind: Timed, Clock: CPUClock, Threshold: off,
		Bench:  UnitCPUSystem,
		Absent: "no CPU time recorded", Value: cpuTime(func(r *Repetition) float64 { return r.CPUSystemSeconds })},
	{Name: MinorFaults, Label: "minor page faults", Heading: "minor faults",
		Unit: UnitCount, Better: LowerIsBetter, Kind: Exact, Threshold: off,
		Readers: Compared, Bench: "minor-faults",
		Absent: noFaults, Value: optionalCount(func(r *Repetition) *int64 { return r.MinorFaults })},
	{Name: MajorFaults, Label: "major page faults", Heading: "major faults",
		Unit: UnitCount, Better: LowerIsBetter, Kind: Exact, Threshold: off,
		Readers: Compared, Bench: "major-faults",
		Absent: noFaults, Value: optionalCount(func(r *Repetition) *int64 { return r.MajorFaults })},
	{Name: SetupSeconds, Label: "setup time", Heading: "setup s",
		Unit: UnitSecond, Better: LowerIsBetter, Kind: Timed, Clock: WallClock, Threshold: off,
		Readers: Compared | Tracked, Bench: UnitSetup,
		Absent: "no setup time: the exec driver, a warm worker's later repetition, or a document from before setup was measured apart",
		Value:  optional(func(r *Repetition) *float64 { return r.SetupSeconds })},
	{Name: EnergyJoules, Label: "GPU energy", Heading: "J",
		Unit: UnitJoule, Better: LowerIsBetter, Kind: Timed, Threshold: off,
		Absent: "no energy: NVML absent, or the device does not count energy",
		Value:  optional(func(r *Repetition) *float64 { return r.EnergyJoules })},
	{Name: JoulesPerProof, Label: "GPU energy per proof", Heading: "J/proof",
		Unit: UnitJoule, Better: LowerIsBetter, Kind: Timed, Threshold: off,
		Readers: Compared | Tracked, Bench: UnitJoulesPerProof,
		Absent: "no energy: NVML absent, or the device does not count energy",
		Value:  optional(func(r *Repetition) *float64 { return r.JoulesPerProof })},
	{Name: FailedRepetitions, Label: "failed repetitions", Heading: "failed repetitions",
		Unit: UnitCount, Better: LowerIsBetter, Kind: Exact, Threshold: 0,
		Readers: Compared, Derived: true, Total: true,
		Absent: noStatus, Value: func(r *Repetition) (float64, bool) {
			if r.Status == "" {
				return 0, false
			}
			if r.Failed() {
				return 1, true
			}
			return 0, true
		}},
	{Name: FailedPartitions, Label: "failed partitions", Heading: "failed partitions",
		Unit: UnitCount, Better: LowerIsBetter, Kind: Exact, Threshold: 0,
		Readers: Compared, Total: true,
		Absent: noStatus, Value: func(r *Repetition) (float64, bool) {
			return float64(r.FailedPartitions), r.Status != ""
		}},
	{Name: UnverifiedProofs, Label: "unverified proofs", Heading: "unverified proofs",
		Unit: UnitCount, Better: LowerIsBetter, Kind: Exact, Threshold: 0,
		Readers: Compared, Derived: true, Total: true,
		Absent: "not verified: a repetition that did not finish, or a key that cannot verify",
		Value: func(r *Repetition) (float64, bool) {
			if !r.Measured() || !r.Verifiable {
				return 0, false
			}
			return float64(max(r.Proofs-r.ProofsVerified, 0)), true
		}},
}

// cpuSeconds is the CPU time of the repetition's measured work, read
// alike on both sides of a comparison (see Alike).
func cpuSeconds() Metric {
	m := Metric{Name: CPUSeconds, Label: "CPU time", Heading: "CPU s",
		Unit: UnitSecond, Better: LowerIsBetter, Kind: Timed, Clock: CPUClock, Threshold: 0.05,
		Readers: Compared | Tracked, Derived: true,
		Absent: "no CPU time recorded",
		narrow: optional(func(r *Repetition) *float64 { return r.RunCPUSeconds }),
		wide: nonZero(func(r *Repetition) float64 {
			return r.CPUUserSeconds + r.CPUSystemSeconds
		}),
	}
	m.Value = func(r *Repetition) (float64, bool) {
		if v, ok := m.narrow(r); ok {
			return v, true
		}
		return m.wide(r)
	}
	return m
}

// nonZero reads a figure stored as a plain number: absent when 0.
func nonZero(get func(r *Repetition) float64) func(r *Repetition) (float64, bool) {
	return func(r *Repetition) (float64, bool) {
		v := get(r)
		return v, v != 0
	}
}

// optional reads a figure stored as a pointer: absent when nil.
func optional(get func(r *Repetition) *float64) func(r *Repetition) (float64, bool) {
	return func(r *Repetition) (float64, bool) {
		if p := get(r); p != nil {
			return *p, true
		}
		return 0, false
	}
}

// optionalBytes reads a byte count stored as a pointer: absent when nil.
func optionalBytes(get func(r *Repetition) *uint64) func(r *Repetition) (float64, bool) {
	return func(r *Repetition) (float64, bool) {
		if p := get(r); p != nil {
			return float64(*p), true
		}
		return 0, false
	}
}

// optionalCount reads a count stored as a pointer: absent when nil.
func optionalCount(get func(r *Repetition) *int64) func(r *Repetition) (float64, bool) {
	return func(r *Repetition) (float64, bool) {
		if p := get(r); p != nil {
			return float64(*p), true
		}
		return 0, false
	}
}

// cpuTime reads the user or the system share of the process's CPU time:
// either may be 0 in a short run, so both are absent only where neither
// was recorded.
func cpuTime(get func(r *Repetition) float64) func(r *Repetition) (float64, bool) {
	return func(r *Repetition) (float64, bool) {
		return get(r), r.CPUUserSeconds != 0 || r.CPUSystemSeconds != 0
	}
}

// Metrics returns the table, in the order readers list metrics.
func Metrics() []Metric { return slices.Clone(metrics) }

// MetricsFor returns the metrics a reader takes, in the table's order.
func MetricsFor(r Readers) []Metric {
	var out []Metric
	for _, m := range metrics {
		if m.In(r) {
			out = append(out, m)
		}
	}
	return out
}

// MetricNamed returns the metric of that name: how a user's --threshold
// or --metric finds it.
func MetricNamed(name string) (Metric, bool) {
	i := slices.IndexFunc(metrics, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return metrics[i], true
}

// MetricOf returns the metric a reader names by one of the constants
// above; an unknown name is a programming error, and panics.
func MetricOf(name string) Metric {
	m, ok := MetricNamed(name)
	if !ok {
		panic(fmt.Sprintf("results: no metric %q in the table", name))
	}
	return m
}

// MetricNames are the table's names, in its order.
func MetricNames(r Readers) []string {
	var names []string
	for _, m := range MetricsFor(r) {
		names = append(names, m.Name)
	}
	return names
}

// In reports whether the given reader takes the metric.
func (m Metric) In(r Readers) bool { return m.Readers&r != 0 }

// Gated reports whether the metric gates by default.
func (m Metric) Gated() bool { return !math.IsInf(m.Threshold, 1) }

// BenchValue is the figure in the Go benchmark format's unit.
func (m Metric) BenchValue(v float64) float64 {
	if m.BenchScale != 0 {
		return v * m.BenchScale
	}
	return v
}

// Alike returns the metric to read the given sets of repetitions with:
// for a figure with two readings, the wider one wherever a repetition of
// any set lacks the narrower, so that two sets are never compared on
// different readings (a baseline from before cpu_seconds was the measured
// run's own is not compared with one where it is).
func (m Metric) Alike(sets ...[]*Repetition) Metric {
	if m.narrow == nil {
		return m
	}
	for _, reps := range sets {
		for _, r := range reps {
			if _, ok := m.narrow(r); !ok {
				m.Value = m.wide
				return m
			}
		}
	}
	return m
}

// Bounds of the figures: far beyond any run (a repetition of 115 days, a
// host of 1 EiB, a billion partitions a second, a terawatt-hour a proof),
// near enough that sums and medians of them stay finite.
const (
	maxSeconds = 1e7
	maxBytes   = 1 << 60
	maxRate    = 1e9
	maxJoules  = 1e12
	maxCount   = 1e15
)

// Max is the largest value a repetition can sanely have; every metric is
// at least 0. A figure beyond it is a broken document, not a measurement
// (one of 1.7e308 made every median of the history overflow).
func (m Metric) Max() float64 {
	switch m.Unit {
	case UnitSecond:
		return maxSeconds
	case UnitByte:
		return maxBytes
	case UnitPartitionRate:
		return maxRate
	case UnitJoule:
		return maxJoules
	case UnitFraction:
		return 1 + fractionSlack
	}
	return maxCount
}

// Check refuses a value outside [0, Max].
func (m Metric) Check(v float64) error {
	if !(v >= 0 && v <= m.Max()) { // NaN fails both
		return fmt.Errorf("%s %s outside [0, %s]", m.Name, m.format(v), m.format(m.Max()))
	}
	return nil
}

func (m Metric) format(v float64) string {
	if m.Unit == UnitByte && v >= 0 && v <= maxBytes {
		return fmt.Sprintf("%s (%.0f B)", units.FormatBytes(int64(v)), v)
	}
	return fmt.Sprintf("%g %s", v, m.Unit)
}
