//go:build linux

package run

import (
	"context"
	"os"
	"testing"

	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
)

// TestRepetitionsRecordPageFaults: a repetition of the built-in pipeline
// records its child's page faults over the run (its datasets are fresh
// memory), and an exec repetition its command's.
func TestRepetitionsRecordPageFaults(t *testing.T) {
	spec := smallSpec("faults", config.Hold)
	spec.Warmups, spec.Repeats = 0, 1
	doc, err := newTestRunner(t).Run(context.Background(), []Spec{spec})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reps := append(doc.Scenarios[0].Repetitions,
		runExec(t, execSpec("exec-faults", &ExecSpec{Command: []string{exe, "exec-helper", "alloc", "8", "0s"}}))...)
	if len(reps) != 2 {
		t.Fatalf("%d repetitions, want 2", len(reps))
	}
	for _, rep := range reps {
		if rep.Status != results.StatusOK {
			t.Fatalf("repetition %d: %s %s", rep.Index, rep.Status, rep.Error)
		}
		if rep.MinorFaults == nil || rep.MajorFaults == nil {
			t.Errorf("repetition %d: minor faults %v, major %v: want both counted", rep.Index, rep.MinorFaults, rep.MajorFaults)
			continue
		}
		t.Logf("repetition %d: %d minor, %d major faults", rep.Index, *rep.MinorFaults, *rep.MajorFaults)
		if *rep.MinorFaults <= 0 || *rep.MajorFaults < 0 {
			t.Errorf("repetition %d: %d minor, %d major faults: want minor above 0 (fresh memory was touched)", rep.Index, *rep.MinorFaults, *rep.MajorFaults)
		}
	}
}
