//go:build !linux

package sample

import (
	"errors"
	"fmt"
)

// Process samples one process. Sampling reads Linux's /proc; on other systems
// NewProcess fails with errors.ErrUnsupported.
type Process struct{ pid int }

// NewProcess fails on this system: process sampling needs Linux's /proc.
func NewProcess(pid int) (*Process, error) {
	return nil, fmt.Errorf("sample pid %d: process sampling needs Linux /proc: %w", pid, errors.ErrUnsupported)
}

// Pid is the process being sampled.
func (p *Process) Pid() int { return p.pid }

// Sample is never reached: NewProcess fails on this system.
func (p *Process) Sample(dst *ProcSample) error { return errors.ErrUnsupported }

// RSS is not supported off Linux.
func (p *Process) RSS() (uint64, error) { return 0, errors.ErrUnsupported }

// Close does nothing.
func (p *Process) Close() error { return nil }
