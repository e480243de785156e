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
