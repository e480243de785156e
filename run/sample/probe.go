package sample

import (
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
func OwnRun() Probes { return Probes{&selfUsage{}} }

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
