//go:build !linux

package sample

import (
	"errors"
	"fmt"
)

// ThreadCPU is one thread of this process and its CPU time so far.
type ThreadCPU struct {
	TID     int
	Name    string
	Seconds float64
}

// Threads reads Linux's /proc; elsewhere it is unsupported.
func Threads() ([]ThreadCPU, error) {
	return nil, fmt.Errorf("sample: threads: %w", errors.ErrUnsupported)
}
