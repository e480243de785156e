package pipeline

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestObserverSeesEveryStepInOrder: every partition reports the six events
// in order, and counts rebuilt from them never exceed the engine's own
// counters and reach their peaks (see TimelineEvent). The peaks are reached
// when a state outlasts a report; on synctest's clock every state of the
// schedule does, where in real time a loaded host could preempt a report
// past the state it reports.
func TestObserverSeesEveryStepInOrder(t *testing.T) {
	var mu sync.Mutex
	seen := map[[2]int][]TimelineEvent{}
	live := map[string]int64{}
	peaks := map[string]int64{}
	move := func(name string, d int64) {
		live[name] += d
		peaks[name] = max(peaks[name], live[name])
	}
	w := tinyWorkload(2, 4, 2)
	rep, tr, err := runVirtual(t, Options{
		Backend:    &fakeBackend{startDur: 10 * time.Millisecond, waitDur: time.Millisecond},
		Workload:   w,
		Config:     Config{Strategy: Hold, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1},
		Synthesize: fakeSynth(time.Millisecond, nil),
		Observe: func(ev TimelineEvent, proof, partition int) {
			mu.Lock()
			defer mu.Unlock()
			k := [2]int{proof, partition}
			seen[k] = append(seen[k], ev)
			switch ev {
			case EventSynthEnd:
				move(CounterQueueDepth, 1)
			case EventGPUQueue:
				move(CounterInChannel, 1)
			case EventGPUPickup:
				move(CounterQueueDepth, -1)
				move(CounterInChannel, -1)
			case EventGPUStart:
				move(CounterOnGPU, 1)
			case EventGPUEnd:
				move(CounterOnGPU, -1)
			}
		},
	}, nil)
	if err != nil || rep.PartitionsDone != 8 {
		t.Fatalf("%d partitions done, err %v", rep.PartitionsDone, err)
	}
	want := []TimelineEvent{EventSynthStart, EventSynthEnd, EventGPUQueue, EventGPUPickup, EventGPUStart, EventGPUEnd}
	if len(seen) != 8 {
		t.Errorf("%d partitions observed, want 8", len(seen))
	}
	for k, evs := range seen {
		if !slices.Equal(evs, want) {
			t.Errorf("partition %v: events %v, want %v", k, evs, want)
		}
	}
	for _, name := range []string{CounterQueueDepth, CounterInChannel, CounterOnGPU} {
		if got, want := peaks[name], peak(t, tr, name); got != want {
			t.Errorf("%s: peak from events %d, engine's %d", name, got, want)
		}
	}
}
