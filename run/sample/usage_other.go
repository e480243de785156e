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
