package exec

import (
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

// An exec stage's percentiles are the built-in pipeline's nearest-rank
// ones: of 1..10 ms, p50 is 5 ms and p90 9 ms (the exec driver once took
// the element at index p*n, 6 ms and 10 ms, the maximum).
func TestExecStageSummaryNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 10; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	got := summarize(ds)
	want := results.StageSummary{Count: 10, TotalSeconds: 0.055, MeanSeconds: 0.0055, P50Seconds: 0.005, P90Seconds: 0.009, MaxSeconds: 0.01}
	if got != want {
		t.Errorf("summarize(10..1 ms) = %+v, want %+v", got, want)
	}
	if ds[0] != 10*time.Millisecond {
		t.Error("summarize reordered the stage's durations")
	}
}
