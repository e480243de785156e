//go:build !linux

package sample

import (
	"errors"
	"fmt"
)

// MappingRSS needs Linux's /proc/<pid>/smaps.
func MappingRSS(pid int, addr uintptr) (uint64, error) {
	return 0, fmt.Errorf("sample: mapping residency needs Linux /proc: %w", errors.ErrUnsupported)
}

// SharedRSS needs Linux's /proc/<pid>/statm.
func SharedRSS(pid int) (uint64, error) {
	return 0, fmt.Errorf("sample: shared RSS needs Linux /proc: %w", errors.ErrUnsupported)
}
