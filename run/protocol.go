package run

import (
	"slices"

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

// childResult is the child's account of its run. Figures is the
// repetition's record as far as the child measured it (results.Repetition,
// the one measurement contract: every figure of the run, filled by the
// child's probes and its engine's report and sent as is); the parent
// keeps it whole and adds what only it sees (the peaks sampled from
// outside, the exit, the host's load). The other fields are what the
// parent needs to judge and report the repetition, not figures of it.
type childResult struct {
	Figures results.Repetition `json:"figures"`
	Backend string             `json:"backend"`
	// WhyNotCUDA says why backend auto ran on the CPU.
	WhyNotCUDA string `json:"why_not_cuda,omitempty"`
	Devices    int    `json:"devices"`
	KeyKind    string `json:"key_kind"`

	ProofsFailed int `json:"proofs_failed"`
	VerifyFailed int `json:"verify_failed"`
	// FirstError is the first partition error, if any failed.
	FirstError string `json:"first_error,omitempty"`

	// VmHWM is the child's own kernel peak RSS, read just before it
	// reported (0 if unreadable): the parent weighs it against its own
	// last reading of the same peak.
	VmHWM uint64 `json:"vmhwm"`
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
