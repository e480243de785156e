//go:build !linux

package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/provebench/provebench/results"
)

// errExecLinux: the exec driver samples process trees through Linux's
// /proc and supervises them with a child subreaper.
var errExecLinux = fmt.Errorf("the exec driver needs Linux: %w", errors.ErrUnsupported)

type execDriver struct{ r *Runner }

func (d *execDriver) prepare(context.Context, *Spec, *results.Scenario) error { return errExecLinux }

func (d *execDriver) repetition(_ context.Context, _ *Spec, idx int, warmup bool, _ Progress) results.Repetition {
	return results.Repetition{Index: idx + 1, Warmup: warmup, StartedAt: time.Now().UTC(), Status: results.StatusFailed, Error: errExecLinux.Error()}
}

// ShimMain fails off Linux.
func ShimMain(context.Context, io.Reader, io.Writer) error { return errExecLinux }

// CheckExecPaths has nothing to check off Linux: no exec configuration
// runs there.
func CheckExecPaths([]Spec, string) error { return nil }

func (d *execDriver) release() {}
