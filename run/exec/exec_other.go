//go:build !linux

package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/supervise"
)

// errExecLinux: the exec driver samples process trees through Linux's
// /proc and supervises them with a child subreaper.
var errExecLinux = fmt.Errorf("the exec driver needs Linux: %w", errors.ErrUnsupported)

// Driver fails off Linux.
type Driver struct {
	Exe, OutDir, CacheDir string
	GPU                   supervise.GPUSampler
	Log                   io.Writer
}

// Prepare fails off Linux.
func (d *Driver) Prepare(context.Context, *Spec, *results.Scenario) error { return errExecLinux }

// Repetition fails off Linux.
func (d *Driver) Repetition(_ context.Context, _ *Spec, idx int, warmup bool, _ Progress) results.Repetition {
	return results.Repetition{Index: idx + 1, Warmup: warmup, StartedAt: time.Now().UTC(), Status: results.StatusFailed, Error: errExecLinux.Error()}
}

// ShimMain fails off Linux.
func ShimMain(context.Context, io.Reader, io.Writer) error { return errExecLinux }

// CheckPaths has nothing to check off Linux: no exec configuration runs
// there.
func CheckPaths([]Spec, string) error { return nil }
