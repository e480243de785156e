package pipeline

import (
	"slices"
	"testing"
	"time"
)

func TestSummarizeDurations(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		in   []time.Duration
		want StageStats
	}{
		{ms(5), StageStats{Count: 1, Total: ms(5)[0], Mean: ms(5)[0], P50: ms(5)[0], P90: ms(5)[0], Max: ms(5)[0]}},
		{ms(10, 1, 3, 2), StageStats{Count: 4, Total: ms(16)[0], Mean: ms(4)[0], P50: ms(2)[0], P90: ms(10)[0], Max: ms(10)[0]}},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), StageStats{Count: 10, Total: ms(55)[0], Mean: 5500 * time.Microsecond,
			P50: ms(5)[0], P90: ms(9)[0], Max: ms(10)[0]}},
	} {
		if s := SummarizeDurations(slices.Clone(tc.in)); s != tc.want {
			t.Errorf("SummarizeDurations(%v) = %+v, want %+v", tc.in, s, tc.want)
		}
	}
	if s := SummarizeDurations(nil); s != (StageStats{}) {
		t.Errorf("empty: %+v", s)
	}
}

func TestSummarizeSkipsUnfinishedPartitions(t *testing.T) {
	parts := []PartitionTiming{
		{Outcome: Done, Synthesis: time.Second, GPUStart: 2 * time.Second},
		{Outcome: Failed, Synthesis: time.Hour},
		{Outcome: Cancelled, Synthesis: time.Hour},
	}
	s := Summarize(parts)
	if s[StageSynthesis].Count != 1 || s[StageSynthesis].Max != time.Second {
		t.Errorf("synthesis summary %+v counts an unfinished partition", s[StageSynthesis])
	}
	if _, ok := s[StageFreeABC]; ok {
		t.Error("free_abc summarised although it never ran")
	}
}
