package pipeline

import (
	"sync/atomic"
)

// Counter names, as they appear in Tracker.Names and in the results JSON.
//
// Live counters describe what the pipeline holds now; every increment has
// its decrement, so all of them read 0 once Run has returned, whatever the
// run's outcome. Monotone counters only grow.
const (
	// CounterProofsInFlight: proofs admitted (holding one of the
	// Workload.Concurrency slots) and not yet finished.
	CounterProofsInFlight = "proofs_in_flight"
	// CounterPermitsHeld: partition permits (release and hold strategies)
	// taken and not yet returned.
	CounterPermitsHeld = "permits_held"
	// CounterBudgetReservedBytes: bytes reserved from the byte budget
	// (budget strategy) and not yet returned.
	CounterBudgetReservedBytes = "budget_reserved_bytes"
	// CounterPreGPU: partitions admitted and not yet taken by a GPU worker
	// (synthesizing, waiting to send or in the channel). The pacer's
	// max_in_flight caps it.
	CounterPreGPU = "pre_gpu"
	// CounterSynthesizing: partitions inside Synthesize.
	CounterSynthesizing = "synthesizing"
	// CounterWaitingSend: synthesized partitions blocked before the
	// channel, each holding its whole dataset (the seed's pile-up).
	CounterWaitingSend = "waiting_send"
	// CounterInChannel: partitions the channel has accepted and no GPU
	// worker has taken yet.
	CounterInChannel = "in_channel"
	// CounterQueueDepth: the GPU queue depth, waiting_send + in_channel:
	// partitions synthesized and not yet taken by a GPU worker. Kept as
	// one counter so that it is exact at every instant; the pacer
	// controls it.
	CounterQueueDepth = "queue_depth"
	// CounterOnGPU: partitions inside Backend.Start (the NTT region).
	CounterOnGPU = "on_gpu"
	// CounterFinalizing: partitions whose Start has returned and whose
	// MSMs and assembly (Job.Wait) are pending.
	CounterFinalizing = "finalizing"
	// CounterABCBytes: live bytes of a/b/c vectors held by the pipeline,
	// counted from when synthesis hands a dataset over (a partition being
	// synthesized shows in synthesizing) until they are freed.
	CounterABCBytes = "abc_bytes"
	// CounterWireBytes: live bytes of wire assignments held by the
	// pipeline, counted likewise.
	CounterWireBytes = "wire_bytes"
	// CounterDatasetBytes: abc_bytes + wire_bytes as one counter, so its
	// peak is the true peak of live dataset memory.
	CounterDatasetBytes = "dataset_bytes"

	// CounterGPUStarts: Backend.Start calls that have returned.
	CounterGPUStarts = "gpu_starts"
	// CounterPartitionsDone: partitions proved.
	CounterPartitionsDone = "partitions_done"
	// CounterPartitionsFailed: partitions whose synthesis or proving
	// failed.
	CounterPartitionsFailed = "partitions_failed"
	// CounterPartitionsCancelled: partitions admitted and then abandoned
	// because their proof failed or the run was cancelled.
	CounterPartitionsCancelled = "partitions_cancelled"
	// CounterProofsDone: proofs whose every partition was proved.
	CounterProofsDone = "proofs_done"
	// CounterProofsFailed: proofs with a failed partition.
	CounterProofsFailed = "proofs_failed"
	// CounterProofsCancelled: proofs in flight when the run was
	// cancelled.
	CounterProofsCancelled = "proofs_cancelled"
)

// counter indexes the tracker's arrays.
type counter int

const (
	// Live counters.
	cProofsInFlight counter = iota
	cPermitsHeld
	cBudgetReserved
	cPreGPU
	cSynthesizing
	cWaitingSend
	cInChannel
	cQueueDepth
	cOnGPU
	cFinalizing
	cABCBytes
	cWireBytes
	cDatasetBytes

	// Monotone counters.
	cGPUStarts
	cPartitionsDone
	cPartitionsFailed
	cPartitionsCancelled
	cProofsDone
	cProofsFailed
	cProofsCancelled
	numCounters
)

// numLive is the number of live counters: they come first.
const numLive = cGPUStarts

var counterNames = [numCounters]string{
	cProofsInFlight:      CounterProofsInFlight,
	cPermitsHeld:         CounterPermitsHeld,
	cBudgetReserved:      CounterBudgetReservedBytes,
	cPreGPU:              CounterPreGPU,
	cSynthesizing:        CounterSynthesizing,
	cWaitingSend:         CounterWaitingSend,
	cInChannel:           CounterInChannel,
	cQueueDepth:          CounterQueueDepth,
	cOnGPU:               CounterOnGPU,
	cFinalizing:          CounterFinalizing,
	cABCBytes:            CounterABCBytes,
	cWireBytes:           CounterWireBytes,
	cDatasetBytes:        CounterDatasetBytes,
	cGPUStarts:           CounterGPUStarts,
	cPartitionsDone:      CounterPartitionsDone,
	cPartitionsFailed:    CounterPartitionsFailed,
	cPartitionsCancelled: CounterPartitionsCancelled,
	cProofsDone:          CounterProofsDone,
	cProofsFailed:        CounterProofsFailed,
	cProofsCancelled:     CounterProofsCancelled,
}

// Tracker holds the pipeline's buffer counters and their peaks. Every method
// is safe for concurrent use; updates and snapshots are lock-free.
type Tracker struct {
	vals  [numCounters]atomic.Int64
	peaks [numCounters]atomic.Int64
}

// Snapshot is a reading of every counter, parallel to Tracker.Names.
// Each value is exact at the instant it was loaded; the values are loaded
// one after another, not as one atomic cut.
type Snapshot struct {
	Values, Peaks []int64
}

// NewTracker returns a tracker with every counter at zero.
func NewTracker() *Tracker { return new(Tracker) }

// Names lists the counters in their stable order: the live ones first,
// then the monotone ones.
func (t *Tracker) Names() []string {
	out := make([]string, numCounters)
	copy(out, counterNames[:])
	return out
}

// IsLive reports whether name is a live counter (one that returns to zero
// at the end of a run) rather than a monotone one.
func IsLive(name string) bool {
	for i := counter(0); i < numLive; i++ {
		if counterNames[i] == name {
			return true
		}
	}
	return false
}

// Snapshot reads every counter into dst, reusing its slices: with a dst
// that has been filled once, it does not allocate. Safe during Run.
func (t *Tracker) Snapshot(dst *Snapshot) {
	dst.Values = resize(dst.Values, int(numCounters))
	dst.Peaks = resize(dst.Peaks, int(numCounters))
	for i := range t.vals {
		dst.Values[i] = t.vals[i].Load()
		dst.Peaks[i] = t.peaks[i].Load()
	}
}

func resize(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}

// Live returns the live counters by name. After Run every one is 0; a
// non-zero value is an accounting bug (a buffer or a slot that leaked).
func (t *Tracker) Live() map[string]int64 {
	m := make(map[string]int64, numLive)
	for i := counter(0); i < numLive; i++ {
		m[counterNames[i]] = t.vals[i].Load()
	}
	return m
}

// Get returns a counter's value and peak by name; ok is false for an
// unknown name.
func (t *Tracker) Get(name string) (value, peak int64, ok bool) {
	for i, n := range counterNames {
		if n == name {
			return t.vals[i].Load(), t.peaks[i].Load(), true
		}
	}
	return 0, 0, false
}

// add moves counter c by delta and raises its peak if the new value
// exceeds it.
func (t *Tracker) add(c counter, delta int64) {
	v := t.vals[c].Add(delta)
	if delta <= 0 {
		return
	}
	for {
		p := t.peaks[c].Load()
		if v <= p || t.peaks[c].CompareAndSwap(p, v) {
			return
		}
	}
}

func (t *Tracker) inc(c counter) { t.add(c, 1) }
func (t *Tracker) dec(c counter) { t.add(c, -1) }

func (t *Tracker) load(c counter) int64 { return t.vals[c].Load() }
