//go:build !linux

package sample

import (
	"errors"
	"fmt"
	"os"
)

func usageOf(ps *os.ProcessState) (Usage, error) {
	return Usage{}, fmt.Errorf("sample: pid %d: rusage units are only known for Linux: %w", ps.Pid(), errors.ErrUnsupported)
}

// Whose CPU time CPUTimes reads (Linux only).
const (
	Self     = 0
	Children = -1
)

// CPUTimes is unknown outside Linux.
func CPUTimes(who int) (Times, bool) { return Times{}, false }

// ResetPeakRSS is Linux's alone.
func ResetPeakRSS() error {
	return fmt.Errorf("reset the peak resident set: %w", errors.ErrUnsupported)
}
