//go:build linux

package sample

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// FromRusage converts a Linux rusage (as wait4 fills it) to a Usage.
// ru_maxrss is in KiB on Linux. See Usage.PeakRSSBytes for what it includes.
func FromRusage(ru *syscall.Rusage) Usage {
	return Usage{
		PeakRSSBytes:  uint64(ru.Maxrss) << 10,
		UserSeconds:   time.Duration(syscall.TimevalToNsec(ru.Utime)).Seconds(),
		SystemSeconds: time.Duration(syscall.TimevalToNsec(ru.Stime)).Seconds(),
	}
}

func usageOf(ps *os.ProcessState) (Usage, error) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return Usage{}, fmt.Errorf("sample: pid %d: no rusage in process state (%T)", ps.Pid(), ps.SysUsage())
	}
	return FromRusage(ru), nil
}

// Whose CPU time CPUTimes reads.
const (
	Self     = syscall.RUSAGE_SELF     // this process
	Children = syscall.RUSAGE_CHILDREN // its children that have been waited for, and theirs
)

// CPUTimes is the CPU time of this process (Self) or of its waited-for
// children (Children) so far, from getrusage.
func CPUTimes(who int) (Times, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return Times{}, false
	}
	return Times{User: time.Duration(ru.Utime.Nano()).Seconds(), System: time.Duration(ru.Stime.Nano()).Seconds()}, true
}

// ResetPeakRSS resets this process's kernel peak of the resident set
// (VmHWM) to its current resident set, so that the peak read later is the
// peak since now: Linux 4.0 and later, by writing 5 to clear_refs.
func ResetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("reset the peak resident set: %w", err)
	}
	return nil
}
