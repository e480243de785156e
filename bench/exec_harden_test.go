//go:build linux

package bench

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/bench/results"
)

// Regression tests of issues 20 and 21 for the exec driver.

// Issue 21: the exec driver holds the tree's final peak to memory_limit,
// as the in-process driver does: a command that passes the limit before
// the first sample is a memory-limit repetition, not ok.
func TestExecMemoryLimitAgainstFinalPeak(t *testing.T) {
	exe, _ := os.Executable()
	spec := execSpec("spike", &ExecSpec{Command: []string{exe, "exec-helper", "alloc", "160", "20ms"}})
	spec.SampleInterval = 10 * time.Hour // no sample: only the kernel's peak sees it
	spec.MemoryLimit = 100 << 20
	rep := runExec(t, spec)[0]
	if rep.Status != results.StatusMemoryLimit {
		t.Fatalf("status %s (%s), peak %d MiB (%s): want memory-limit", rep.Status, rep.Error, rep.PeakRSSBytes>>20, rep.PeakRSSSource)
	}
	if rep.PeakRSSSource != results.PeakFromCgroup && !strings.Contains(rep.Error, "between samples") {
		t.Errorf("error %q does not say the limit was passed between samples", rep.Error)
	}
}
