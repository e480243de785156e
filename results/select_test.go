package results

import (
	"slices"
	"testing"
)

// Measured keeps the finished repetitions that are not warm-ups, in order,
// and Values their figures of one metric, those lacking it left out.
func TestScenarioMeasuredValues(t *testing.T) {
	sc := &Scenario{Repetitions: []Repetition{
		{Index: 0, Warmup: true, Status: StatusOK, SecondsPerProof: 9},
		{Index: 1, Status: StatusOK, SecondsPerProof: 2},
		{Index: 2, Status: StatusFailed, SecondsPerProof: 7},
		{Index: 3, Status: StatusOK, SecondsPerProof: 1},
		{Index: 4, Status: StatusOK},
	}}
	var idx []int
	for _, r := range sc.Measured() {
		idx = append(idx, r.Index)
	}
	if !slices.Equal(idx, []int{1, 3, 4}) {
		t.Errorf("Measured = repetitions %v, want 1, 3, 4", idx)
	}
	// Repetition 4 recorded no s/proof (absent, not zero).
	if got, want := sc.Values(MetricOf(SecondsPerProof)), []float64{2, 1}; !slices.Equal(got, want) {
		t.Errorf("Values = %v, want %v (the measured ones that have it)", got, want)
	}
}
