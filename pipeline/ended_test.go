package pipeline

import (
	"context"
	"testing"
	"time"
)

// A partition's end is recorded, not rebuilt from its stages: the stages
// leave gaps between them (hand-offs between goroutines), so the recorded
// end is at or after their sum, and the run's wall time reaches the last
// real end.
func TestPartitionsRecordTheirRealEnd(t *testing.T) {
	rep, _, err := runChecked(t, context.Background(), Options{
		Backend:    &fakeBackend{startDur: 2 * time.Millisecond, waitDur: 3 * time.Millisecond},
		Workload:   tinyWorkload(2, 3, 2),
		Config:     Config{Strategy: Release, PartitionWorkers: 3, ChannelCapacity: 1, GPUWorkers: 1},
		Synthesize: fakeSynth(2*time.Millisecond, nil),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, last := rep.Partitions[0].Admitted, time.Duration(0)
	for i, p := range rep.Partitions {
		stages := p.Admitted + p.Synthesis + p.QueueWait + p.GPUStart + p.FreeABC + p.Finalize + p.Dealloc
		if p.Ended == 0 || p.Ended < stages || p.End() != p.Ended || p.Ended > rep.Elapsed {
			t.Errorf("partition %d: ended %v, stages sum to %v, run %v", i, p.Ended, stages, rep.Elapsed)
		}
		first, last = min(first, p.Admitted), max(last, p.Ended)
	}
	if rep.Wall != last-first {
		t.Errorf("wall %v, want last end - first admission = %v", rep.Wall, last-first)
	}
}
