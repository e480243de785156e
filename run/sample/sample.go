// Package sample reads what the runner samples about a child process on one
// time axis: its resident set and the kernel's peak of it (VmHWM), its CPU
// time, and, once it has been waited for, the kernel's own accounting of its
// life (wait4's rusage). It also describes the host once per run.
//
// Sampling is meant to run every few milliseconds beside the process being
// measured, so a Process keeps its /proc files open and re-reads them in
// place: one sample costs two pread calls and no allocation (see
// BenchmarkSample for the figures against gopsutil).
package sample

import "errors"

// ProcSample is one reading of a process.
type ProcSample struct {
	// RSSBytes is the resident set now (VmRSS): what the sampled time series
	// shows.
	RSSBytes uint64
	// PeakRSSBytes is the kernel's own high-water mark of the resident set
	// since the process was exec'd (VmHWM). Unlike the sampled series it
	// misses no spike between two samples, and it is never below RSSBytes
	// of the same sample. The kernel updates it from per-CPU batched
	// counters, so it can read a little (KiBs) below an RSS sampled
	// earlier: take the maximum over samples.
	PeakRSSBytes uint64
	// UserSeconds and SystemSeconds are the CPU time of all the process's
	// threads so far, at the kernel's clock-tick resolution (10 ms).
	UserSeconds   float64
	SystemSeconds float64
}

// ErrExited is returned by Sample once the process has exited: an exited
// process that has not yet been waited for has no memory to report, and one
// that has been waited for is gone. The last successful sample holds its final
// figures; the rest comes from wait4 (see ExitUsage).
var ErrExited = errors.New("process has exited")
