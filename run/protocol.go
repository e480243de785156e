package run

import (
	"slices"
	"time"

	"github.com/provebench/provebench/results"
)

// The parent and a repetition's child process talk over two channels: the
// parent writes one childJob as JSON on the child's stdin; the child writes
// JSON lines (childMsg) on file descriptor 3, a pipe the parent reads while it
// samples the child. The child's stderr is kept for error reports.
//
// A serving child (childJob.Serve: run --reuse-process, ab's warm sides)
// stays up after its first repetition: it reads one childRequest after
// another on stdin, each answered like the first (ready, samples, done),
// until the parent closes stdin. Its setup (key, backend, pool, warm-up) is
// paid once, before the first.

// childStreamFD is the child's descriptor for its message stream (the first
// of exec.Cmd.ExtraFiles).
const childStreamFD = 3

// childJob is what one repetition's child runs.
type childJob struct {
	Spec       Spec   `json:"spec"`
	Repetition int    `json:"repetition"`
	Warmup     bool   `json:"warmup"`
	CacheDir   string `json:"cache_dir"`
	// HeapProfile, when set, is where the child writes a heap profile
	// (pprof) taken at its Go heap's peak.
	HeapProfile string `json:"heap_profile,omitempty"`
	// ParentPID is the runner's pid. The child refuses to run when its
	// parent is another: the runner died before the child started, and
	// its parent-death signal was never armed for the new parent.
	ParentPID int `json:"parent_pid,omitempty"`
	// Serve keeps the child up after this repetition for more requests.
	Serve bool `json:"serve,omitempty"`
}

// childRequest asks a serving child for one more repetition.
type childRequest struct {
	Repetition  int    `json:"repetition"`
	Warmup      bool   `json:"warmup"`
	HeapProfile string `json:"heap_profile,omitempty"`
}

// Message kinds on the child's stream.
const (
	msgReady  = "ready"  // key loaded; the pipeline starts now; carries the series names
	msgSample = "sample" // live counters and device stats, in the order of ready's names
	msgDone   = "done"   // the pipeline finished; carries the result
	msgError  = "error"  // the child failed; carries the message
)

type childMsg struct {
	Kind string `json:"kind"`
	// T is seconds since the pipeline started, by the child's clock.
	T      float64      `json:"t,omitempty"`
	Names  []string     `json:"names,omitempty"`
	Values []int64      `json:"values,omitempty"`
	Result *childResult `json:"result,omitempty"`
	Error  string       `json:"error,omitempty"`
}

// childResult is the child's account of its run: the engine's report in the
// results document's terms, and what only the child can know exactly.
type childResult struct {
	Backend string `json:"backend"`
	// WhyNotCUDA says why backend auto ran on the CPU.
	WhyNotCUDA string  `json:"why_not_cuda,omitempty"`
	Devices    int     `json:"devices"`
	KeyKind    string  `json:"key_kind"`
	Verifiable bool    `json:"verifiable"`
	WallSecs   float64 `json:"wall_seconds"`
	// ElapsedSecs is the whole of the engine's Run, over which device busy
	// time is measured.
	ElapsedSecs float64 `json:"elapsed_seconds"`

	PartitionsDone   int `json:"partitions_done"`
	PartitionsFailed int `json:"partitions_failed"`
	ProofsDone       int `json:"proofs_done"`
	ProofsFailed     int `json:"proofs_failed"`
	ProofsVerified   int `json:"proofs_verified"`
	VerifyFailed     int `json:"verify_failed"`
	// FirstError is the first partition error, if any failed.
	FirstError string `json:"first_error,omitempty"`

	// DeviceBusy is each device's busy time during the pipeline run.
	DeviceBusy []time.Duration `json:"device_busy"`

	PeakCounters  map[string]int64                `json:"peak_counters"`
	FinalCounters map[string]int64                `json:"final_counters"`
	Stages        map[string]results.StageSummary `json:"stages"`
	// VmHWM is the child's own kernel peak RSS, read just before it
	// reported (0 if unreadable).
	VmHWM uint64 `json:"vmhwm"`
	// HeapProfileSecs is when the heap profile was taken (seconds since
	// the pipeline's start); nil when none was written.
	HeapProfileSecs *float64 `json:"heap_profile_seconds,omitempty"`

	// Measure, SetupSecs and SetupStages: how the clock started and what
	// the prover's setup took before it (results.Repetition's fields).
	// SetupSecs is nil for every repetition a serving child runs after
	// its first: the setup was paid once, before that one.
	Measure     string             `json:"measure"`
	SetupSecs   *float64           `json:"setup_seconds,omitempty"`
	SetupStages map[string]float64 `json:"setup_stages,omitempty"`
	// DeviceSecsPerPartition and DeviceStageSecs: device time per
	// partition, on the device's clock (deviceTimes).
	DeviceSecsPerPartition *float64           `json:"device_seconds_per_partition,omitempty"`
	DeviceStageSecs        map[string]float64 `json:"device_stage_seconds,omitempty"`
	// FirstStartSecs is the first partition's Start (firstStart).
	FirstStartSecs *float64 `json:"first_start_seconds,omitempty"`
	// UnpooledBuffers counts dataset buffers a warm start's page-locked
	// pool could not serve (nil without a pool).
	UnpooledBuffers *int64 `json:"unpooled_buffers,omitempty"`
	// RunCPUSecs is the child's CPU time over the run alone (rusage).
	RunCPUSecs *float64 `json:"run_cpu_seconds,omitempty"`
	// MinorFaults and MajorFaults are the child's page faults over the
	// run alone (rusage); nil where they could not be read.
	MinorFaults *int64 `json:"minor_faults,omitempty"`
	MajorFaults *int64 `json:"major_faults,omitempty"`
	// EnergyJoules is the GPUs' energy over the run (NVML); nil without.
	EnergyJoules *float64 `json:"energy_joules,omitempty"`
	// ProverSettings are the backend's (prover.Describer).
	ProverSettings map[string]string `json:"prover_settings,omitempty"`
	// CPUBreakdown splits RunCPUSecs by where it went.
	CPUBreakdown *results.CPUBreakdown `json:"cpu_breakdown,omitempty"`
	// Worker is set by a serving child.
	Worker *results.Worker `json:"worker,omitempty"`
	// WindowUserSecs and WindowSystemSecs: a serving child's CPU time from
	// the request to the result (its process lives on, so wait4 cannot
	// tell the repetition's share).
	WindowUserSecs   *float64 `json:"window_user_seconds,omitempty"`
	WindowSystemSecs *float64 `json:"window_system_seconds,omitempty"`
}

// Series names the child adds to the pipeline's counters: the backend's
// device stats, summed over devices.
const (
	seriesDeviceMemory = "device_memory_bytes"
	seriesDeviceQueued = "device_queued"
	seriesDeviceBusy   = "device_busy_us" // cumulative
	// seriesDeviceSpan is the device time the busy figure covers
	// (gpu.DeviceStats.Span): the steady busy fraction is the ratio of
	// their growth, which cannot pass 100%.
	seriesDeviceSpan = "device_span_us"
)

// steadyBusyFraction is the devices' busy fraction between 10% and 90% of
// the partitions done: the growth of their busy time over the growth of the
// device time it covers (gpu.DeviceStats.Span), both as the child streamed
// them, so the fraction is on the devices' own clock and cannot pass 100%
// however late a backend credits its work; false when the run is too short,
// or sampled too coarsely, to tell.
func steadyBusyFraction(rows [][]int64, names []string, partitions int) (float64, bool) {
	iDone, iBusy, iSpan := slices.Index(names, "partitions_done"), slices.Index(names, seriesDeviceBusy), slices.Index(names, seriesDeviceSpan)
	if iDone < 0 || iBusy < 0 || iSpan < 0 || partitions < 5 {
		return 0, false
	}
	lo, hi := -1, -1
	for i, row := range rows {
		if len(row) != len(names) {
			continue
		}
		d := row[iDone]
		if lo < 0 && d*10 >= int64(partitions) {
			lo = i
		}
		if hi < 0 && d*10 >= int64(partitions)*9 {
			hi = i
		}
	}
	if lo < 0 || hi <= lo {
		return 0, false
	}
	span := rows[hi][iSpan] - rows[lo][iSpan]
	if span <= 0 {
		return 0, false
	}
	return float64(rows[hi][iBusy]-rows[lo][iBusy]) / float64(span), true
}
