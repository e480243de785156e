package results_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

// TestAdoptKeepsIdentity: the record takes every figure a measuring
// process sent, and keeps its own index, warm-up flag and start.
func TestAdoptKeepsIdentity(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rep := results.Repetition{Index: 3, Warmup: true, StartedAt: start}
	minor := int64(7)
	sent := results.Repetition{Index: 99, StartedAt: start.Add(time.Hour), WallSeconds: 2, Partitions: 8, MinorFaults: &minor,
		Stages: map[string]results.StageSummary{"ntt": {Count: 1}}}
	rep.Adopt(sent)
	want := sent
	want.Index, want.Warmup, want.StartedAt = 3, true, start
	if !reflect.DeepEqual(rep, want) {
		t.Errorf("adopted %+v, want %+v", rep, want)
	}
}

// TestDeriveRates: the rates follow from the counts and the wall time;
// a figure that cannot be derived is zero (rates) or absent (energy).
func TestDeriveRates(t *testing.T) {
	j := 12.0
	rep := results.Repetition{WallSeconds: 4, Partitions: 8, Proofs: 2, EnergyJoules: &j}
	rep.Derive()
	if rep.PartitionsPerSecond != 2 || rep.SecondsPerProof != 2 || rep.JoulesPerProof == nil || *rep.JoulesPerProof != 6 {
		t.Errorf("derived %g partitions/s, %g s/proof, %v J/proof; want 2, 2, 6", rep.PartitionsPerSecond, rep.SecondsPerProof, rep.JoulesPerProof)
	}
	none := results.Repetition{Partitions: 8, PartitionsPerSecond: 5, JoulesPerProof: &j}
	none.Derive()
	if none.PartitionsPerSecond != 0 || none.SecondsPerProof != 0 || none.JoulesPerProof != nil {
		t.Errorf("without wall time or proofs: %+v", none)
	}
}
