package sample

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/provebench/provebench/results"
)

// Probe measures figures of one repetition's measured window: Begin just
// before the window opens, End just after it closes, writing what it
// measured into the repetition's record. The record, results.Repetition,
// is the one measurement contract: the process that measures (the
// pipeline's child, the exec supervisor) fills it through its probes and
// sends it as is, and the runner keeps it whole. A figure a probe could
// not read stays absent (nil), not zero.
//
// A new figure is three things: its probe (here, added to OwnRun or
// ReapedTree, or in the driver where it needs the driver's state), its
// field in results.Repetition and its entry in the metric table
// (results/metrics.go).
type Probe interface {
	Begin()
	End(rep *results.Repetition)
}

// Sampler is a probe that also reads at every sampling tick of the
// measured process (a peak no kernel counter keeps): the pipeline's child
// calls it from its sampling loop. Sample runs on that loop's goroutine,
// and may come before Begin, beside End and after it: such a probe guards
// its state and counts only what it read between the two.
type Sampler interface {
	Sample()
}

// Probes bracket one window together.
type Probes []Probe

// Begin opens the window of every probe, in order.
func (ps Probes) Begin() {
	for _, p := range ps {
		p.Begin()
	}
}

// Sample is one sampling tick for the probes that sample.
func (ps Probes) Sample() {
	for _, p := range ps {
		if s, ok := p.(Sampler); ok {
			s.Sample()
		}
	}
}

// End closes every probe's window and writes their figures into rep.
func (ps Probes) End(rep *results.Repetition) {
	for _, p := range ps {
		p.End(rep)
	}
}

// OwnRun are the probes of a process that measures its own run (the
// pipeline's child): what it spent and touched over the window alone, its
// setup before the window left out.
func OwnRun() Probes { return Probes{&selfUsage{}, &peakAnon{}} }

// ReapedTree are the probes of the exec supervisor, which measures the
// process tree it has reaped, over the tree's whole life.
func ReapedTree() Probes { return Probes{reapedUsage{}} }

// selfUsage is this process's CPU time and page faults over the window
// (getrusage before and after): RunCPUSeconds, MinorFaults, MajorFaults.
type selfUsage struct {
	before unix.Rusage
	ok     bool
}

func (u *selfUsage) Begin() { u.ok = unix.Getrusage(unix.RUSAGE_SELF, &u.before) == nil }

func (u *selfUsage) End(rep *results.Repetition) {
	var after unix.Rusage
	if !u.ok || unix.Getrusage(unix.RUSAGE_SELF, &after) != nil {
		return
	}
	cpu := cpuOf(&after) - cpuOf(&u.before)
	minor, major := after.Minflt-u.before.Minflt, after.Majflt-u.before.Majflt
	rep.RunCPUSeconds, rep.MinorFaults, rep.MajorFaults = &cpu, &minor, &major
}

// cpuOf is a rusage's user and system time together, in seconds.
func cpuOf(ru *unix.Rusage) float64 {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// reapedUsage is the CPU time and page faults of every process this one
// has reaped (getrusage of its children, at the end): CPUUserSeconds,
// CPUSystemSeconds, MinorFaults, MajorFaults.
type reapedUsage struct{}

func (reapedUsage) Begin() {}

func (reapedUsage) End(rep *results.Repetition) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_CHILDREN, &ru) != nil {
		return
	}
	rep.CPUUserSeconds = time.Duration(ru.Utime.Nano()).Seconds()
	rep.CPUSystemSeconds = time.Duration(ru.Stime.Nano()).Seconds()
	rep.MinorFaults, rep.MajorFaults = &ru.Minflt, &ru.Majflt
}

// peakAnon is the peak of this process's anonymous memory
// (results.Repetition.PeakAnonBytes): what the work allocated (heap,
// stacks, the datasets' mappings), without the resident pages of the
// binary and other files it maps. The kernel's peak (VmHWM) counts those
// too (RssFile), and how many are resident depends on how the binary sits
// in the page cache, not on the code: a build the Go linker just wrote
// maps its text as huge pages, a `cp` of it does not
// (docs/results/copies-memory). The kernel keeps no peak of anonymous
// memory alone, so the figure is the larger of two lower bounds of it: the
// kernel's peak less the file-backed and shared pages resident at the
// window's end (file pages only accumulate, so this is exact when none
// was faulted in between the peak and the end, as in a warm worker), and
// the highest anonymous resident set (RssAnon) read at the sampling ticks
// of the window.
type peakAnon struct {
	mu      sync.Mutex
	open    bool
	sampled uint64
}

func (p *peakAnon) Begin() {
	p.mu.Lock()
	p.open, p.sampled = true, 0
	p.mu.Unlock()
}

func (p *peakAnon) Sample() {
	m, ok := selfMemory()
	p.mu.Lock()
	if ok && p.open {
		p.sampled = max(p.sampled, m.anon)
	}
	p.mu.Unlock()
}

func (p *peakAnon) End(rep *results.Repetition) {
	m, ok := selfMemory()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open = false
	if !ok || m.hwm == 0 {
		return
	}
	peak := max(p.sampled, m.anon)
	if others := m.file + m.shmem; m.hwm > others {
		peak = max(peak, m.hwm-others)
	}
	rep.PeakAnonBytes = &peak
}

// memoryNow is a process's memory as /proc/PID/status gives it, in bytes:
// the kernel's peak (VmHWM) and the resident set's anonymous,
// file-backed and shared parts.
type memoryNow struct{ hwm, anon, file, shmem uint64 }

// selfMemory reads this process's memoryNow; ok is false where
// /proc/self/status cannot be read or lacks a line (not Linux).
func selfMemory() (m memoryNow, ok bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return m, false
	}
	for _, f := range []struct {
		key string
		dst *uint64
	}{{"VmHWM:", &m.hwm}, {"RssAnon:", &m.anon}, {"RssFile:", &m.file}, {"RssShmem:", &m.shmem}} {
		i := bytes.Index(status, []byte("\n"+f.key))
		if i < 0 {
			return m, false
		}
		line, _, _ := bytes.Cut(status[i+1+len(f.key):], []byte("\n"))
		kib, err := strconv.ParseUint(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))), 10, 64)
		if err != nil {
			return m, false
		}
		*f.dst = kib << 10
	}
	return m, true
}
