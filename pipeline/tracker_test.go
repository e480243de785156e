package pipeline

import (
	"slices"
	"sync"
	"testing"
)

func TestTrackerNames(t *testing.T) {
	tr := NewTracker()
	names := tr.Names()
	if len(names) != int(numCounters) {
		t.Fatalf("%d names for %d counters", len(names), numCounters)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || seen[n] {
			t.Errorf("name %q empty or repeated", n)
		}
		seen[n] = true
	}
	// The names the runner and the results schema rely on.
	for _, n := range []string{"synthesizing", "waiting_send", "in_channel", "on_gpu", "finalizing",
		"abc_bytes", "wire_bytes", "permits_held", "budget_reserved_bytes", "proofs_in_flight",
		"queue_depth", "partitions_done", "partitions_failed", "proofs_done", "proofs_failed"} {
		if !seen[n] {
			t.Errorf("no counter %q", n)
		}
	}
	names[0] = "mutated"
	if tr.Names()[0] == "mutated" {
		t.Error("Names returns the tracker's own slice")
	}
	live := tr.Live()
	for _, n := range names[1:] {
		_, isLive := live[n]
		if isLive != IsLive(n) {
			t.Errorf("%s: in Live %v, IsLive %v", n, isLive, IsLive(n))
		}
	}
	if IsLive(CounterPartitionsDone) || !IsLive(CounterWaitingSend) {
		t.Error("IsLive misclassifies")
	}
}

func TestTrackerPeaksUnderConcurrency(t *testing.T) {
	tr := NewTracker()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				tr.inc(cOnGPU)
				tr.dec(cOnGPU)
				tr.add(cABCBytes, 10)
				tr.add(cABCBytes, -10)
				tr.inc(cPartitionsDone)
			}
		})
	}
	var snap Snapshot
	for range 100 {
		tr.Snapshot(&snap) // concurrent with the updates (run with -race)
	}
	wg.Wait()
	v, p, _ := tr.Get(CounterOnGPU)
	if v != 0 || p < 1 || p > 8 {
		t.Errorf("on_gpu %d, peak %d; want 0 and 1..8", v, p)
	}
	if _, p, _ := tr.Get(CounterABCBytes); p < 10 || p > 80 {
		t.Errorf("abc_bytes peak %d, want 10..80", p)
	}
	if v, p, _ := tr.Get(CounterPartitionsDone); v != 8000 || p != 8000 {
		t.Errorf("partitions_done %d peak %d, want 8000", v, p)
	}
	if _, _, ok := tr.Get("no_such_counter"); ok {
		t.Error("Get found an unknown counter")
	}
}

func TestSnapshotDoesNotAllocate(t *testing.T) {
	tr := NewTracker()
	tr.add(cWireBytes, 42)
	var snap Snapshot
	tr.Snapshot(&snap)
	if allocs := testing.AllocsPerRun(100, func() { tr.Snapshot(&snap) }); allocs != 0 {
		t.Errorf("Snapshot allocates %v times per call with a reused dst", allocs)
	}
	i := slices.Index(tr.Names(), CounterWireBytes)
	if snap.Values[i] != 42 || snap.Peaks[i] != 42 {
		t.Errorf("wire_bytes reads %d peak %d", snap.Values[i], snap.Peaks[i])
	}
}

func BenchmarkSnapshot(b *testing.B) {
	tr := NewTracker()
	var snap Snapshot
	for b.Loop() {
		tr.Snapshot(&snap)
	}
}
