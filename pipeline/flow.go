package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

	"github.com/provebench/provebench/gpu"
	"github.com/provebench/provebench/gpu/dataset"
)

// item is one admitted partition on its way through the pipeline. It is
// owned by one goroutine at a time (dispatcher, then its synthesis
// goroutine, then a GPU worker, then a finalizer), each handing it on
// through errgroup.Go or the channel, so its fields need no lock. Its flags
// say what it still holds, so that every path releases exactly that.
type item struct {
	proof *proofState
	part  int
	t     *PartitionTiming
	ds    *dataset.Dataset

	permit   bool  // holds a partition permit (release, hold)
	inFlight bool  // holds a max_in_flight slot (pacer)
	preGPU   bool  // counted in pre_gpu
	resvABC  int64 // budget bytes still reserved for a/b/c
	resvWire int64 // budget bytes still reserved for the wires

	synthEnd     time.Time
	finalizeFrom time.Time
}

// proofState is one started proof. Its partitions end in any goroutine; the
// last one to end finishes the proof.
type proofState struct {
	id     int
	ctx    context.Context // cancelled when the proof fails or the run is cancelled
	cancel context.CancelCauseFunc

	// admitted is written by the dispatcher alone and read after the run.
	admitted int

	mu        sync.Mutex
	remaining int // partitions not yet ended (admitted or not)
	failed    bool
	cancelled bool
	timing    ProofTiming
}

// dispatch admits partitions in (proof, partition) order, the order cuzk's
// single dispatcher keeps, and starts a goroutine for each. When it has
// admitted the whole batch (or ctx is done) it waits for those goroutines
// and closes the channel, which stops the GPU workers once they have
// drained it.
func (r *run) dispatch(ctx context.Context) {
	var partitions errgroup.Group
	defer func() {
		_ = partitions.Wait()
		close(r.ch)
	}()
	for p := range r.w.Proofs {
		since := time.Now()
		if err := r.proofSlots.Acquire(ctx, 1); err != nil {
			return
		}
		pr := r.startProof(ctx, p)
		for k := range r.w.Partitions {
			it, err := r.admit(pr, k, since)
			if err != nil {
				// The proof failed or the run was cancelled while the
				// partition waited: it and the rest never start.
				pr.partitionsEnded(r, r.w.Partitions-k, Cancelled)
				break
			}
			partitions.Go(func() error { r.synthesizeAndSend(it); return nil })
			since = time.Now()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

func (r *run) startProof(ctx context.Context, id int) *proofState {
	pctx, cancel := context.WithCancelCause(ctx)
	pr := &proofState{
		id:        id,
		ctx:       pctx,
		cancel:    cancel,
		remaining: r.w.Partitions,
		timing:    ProofTiming{Proof: id, Started: time.Since(r.start)},
	}
	r.proofs[id] = pr
	r.tr.inc(cProofsInFlight)
	return pr
}

// admit passes partition k of pr through the strategy's gate and a
// synthesis slot. since is when it became next in line.
func (r *run) admit(pr *proofState, k int, since time.Time) (*item, error) {
	ctx := pr.ctx
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	it := &item{proof: pr, part: k}
	var err error
	switch r.c.Strategy {
	case Release, Hold:
		if err = r.permits.Acquire(ctx, 1); err == nil {
			it.permit = true
			r.tr.inc(cPermitsHeld)
		}
	case Budget:
		if err = r.budget.Acquire(ctx, r.resvABC+r.resvWires); err == nil {
			it.resvABC, it.resvWire = r.resvABC, r.resvWires
			r.tr.add(cBudgetReserved, r.resvABC+r.resvWires)
		}
	case Pacer:
		if err = r.pacer.acquire(ctx); err == nil {
			if err = r.inFlight.Acquire(ctx, 1); err == nil {
				it.inFlight = true
			}
		}
	}
	if err == nil {
		err = r.synthSlots.Acquire(ctx, 1)
	}
	if err == nil {
		// A slot taken as the proof failed would start a doomed synthesis.
		err = ctx.Err()
		if err != nil {
			r.synthSlots.Release(1)
		}
	}
	if err != nil {
		r.release(it)
		return nil, err
	}
	now := time.Now()
	it.preGPU = true
	r.tr.inc(cPreGPU)
	it.t = &r.timings[pr.id*r.w.Partitions+k]
	*it.t = PartitionTiming{
		Proof:         pr.id,
		Partition:     k,
		Device:        -1,
		Admitted:      now.Sub(r.start),
		AdmissionWait: now.Sub(since),
	}
	pr.admitted++
	return it, nil
}

// synthesizeAndSend synthesizes the partition and offers it to the GPU
// workers through the channel.
func (r *run) synthesizeAndSend(it *item) {
	ctx := it.proof.ctx
	r.tr.inc(cSynthesizing)
	t0 := time.Now()
	ds, err := r.opts.Synthesize(ctx, it.proof.id, it.part)
	it.synthEnd = time.Now()
	it.t.Synthesis = it.synthEnd.Sub(t0)
	r.tr.dec(cSynthesizing)
	r.synthSlots.Release(1)
	switch {
	case err == nil && ds == nil:
		err = errors.New("synthesize returned no dataset")
	case err != nil && ds != nil:
		ds.Free() // a dataset that came with an error is not the pipeline's to count
	}
	if err == nil {
		it.ds = ds
		abc, wires := ds.LiveABCBytes(), ds.LiveWireBytes()
		r.tr.add(cABCBytes, abc)
		r.tr.add(cWireBytes, wires)
		r.tr.add(cDatasetBytes, abc+wires)
		if r.budget != nil && abc+wires > it.resvABC+it.resvWire {
			err = fmt.Errorf("synthesized dataset of %d bytes exceeds its budget reservation of %d", abc+wires, it.resvABC+it.resvWire)
		}
	}
	if r.c.Strategy == Release {
		r.releasePermit(it)
	}
	if err != nil {
		r.end(it, fmt.Errorf("synthesis: %w", err))
		return
	}

	// The channel's capacity is a semaphore of C slots in front of a Go
	// channel of C: a slot is returned only after the GPU worker has moved
	// the counters, so in_channel never reads above C, and a sender
	// holding a slot never blocks on the channel.
	r.tr.inc(cWaitingSend)
	r.tr.inc(cQueueDepth)
	if err := r.chanSlots.Acquire(ctx, 1); err != nil {
		r.tr.dec(cWaitingSend)
		r.tr.dec(cQueueDepth)
		r.end(it, err)
		return
	}
	r.tr.dec(cWaitingSend)
	r.tr.inc(cInChannel)
	if r.c.Strategy == Hold {
		r.releasePermit(it)
	}
	r.ch <- it // the item belongs to a GPU worker from here
}

// gpuWorker takes partitions from the channel until it is closed and runs
// their NTT region on dev; a finalizer waits for each one's MSMs, so the
// worker is free for the next partition as soon as Start returns.
func (r *run) gpuWorker(dev int) {
	for it := range r.ch {
		r.tr.dec(cInChannel)
		r.tr.dec(cQueueDepth)
		r.chanSlots.Release(1)
		it.preGPU = false
		r.tr.dec(cPreGPU)
		r.releaseInFlight(it)
		it.t.QueueWait = time.Since(it.synthEnd)

		ctx := it.proof.ctx
		if err := ctx.Err(); err != nil {
			r.end(it, err)
			continue
		}
		it.t.Device = dev
		r.tr.inc(cOnGPU)
		t0 := time.Now()
		job, err := r.opts.Backend.Start(ctx, dev, it.ds)
		it.t.GPUStart = time.Since(t0)
		r.tr.dec(cOnGPU)
		r.tr.inc(cGPUStarts)
		if err == nil && job == nil {
			err = errors.New("backend returned no job")
		}
		if err != nil {
			r.end(it, fmt.Errorf("gpu start on device %d: %w", dev, err))
			continue
		}
		if r.c.EarlyFree {
			t1 := time.Now()
			freed := it.ds.FreeABC()
			r.tr.add(cABCBytes, -freed)
			r.tr.add(cDatasetBytes, -freed)
			r.releaseBudgetABC(it)
			it.t.FreeABC = time.Since(t1)
		}
		it.finalizeFrom = time.Now()
		r.tr.inc(cFinalizing)
		r.finalizers.Go(func() error { r.finalize(it, job); return nil })
	}
}

// finalize waits for the partition's MSMs and assembly, deallocates its
// dataset and, if asked, verifies the proof.
func (r *run) finalize(it *item, job gpu.Job) {
	res, err := job.Wait()
	it.t.Finalize = time.Since(it.finalizeFrom)
	r.tr.dec(cFinalizing)
	it.t.Stages = res.Stages

	var public []fr.Element
	if err == nil && r.opts.Verify != nil {
		pub, perr := it.ds.Public()
		if perr != nil {
			err = fmt.Errorf("public inputs: %w", perr)
		}
		public = slices.Clone(pub)
	}
	r.dealloc(it)
	if err != nil {
		r.end(it, fmt.Errorf("finalize: %w", err))
		return
	}
	if r.opts.Verify != nil {
		// After the dealloc: verification is the harness's check, not a
		// pipeline stage, and must not hold the dataset.
		it.t.Verified = true
		it.t.VerifyErr = r.opts.Verify(public, &res.Proof)
	}
	r.end(it, nil)
}

// dealloc frees what is left of the partition's dataset and returns its
// budget reservation, timing the free.
func (r *run) dealloc(it *item) {
	if it.ds == nil {
		return
	}
	t0 := time.Now()
	abc, wires := it.ds.Free()
	it.ds = nil
	r.tr.add(cABCBytes, -abc)
	r.tr.add(cWireBytes, -wires)
	r.tr.add(cDatasetBytes, -(abc + wires))
	r.releaseBudgetABC(it)
	r.releaseBudgetWires(it)
	it.t.Dealloc = time.Since(t0)
}

// end finishes a partition on any path: it releases whatever the partition
// still holds, records its outcome and tells its proof. A partition whose
// proof context is done when it fails counts as cancelled: the failure is a
// consequence, not a cause.
func (r *run) end(it *item, err error) {
	r.dealloc(it)
	r.release(it)
	if it.preGPU {
		it.preGPU = false
		r.tr.dec(cPreGPU)
	}
	outcome := Done
	switch {
	case err == nil:
		r.tr.inc(cPartitionsDone)
	case it.proof.ctx.Err() != nil:
		outcome = Cancelled
		err = context.Cause(it.proof.ctx)
		r.tr.inc(cPartitionsCancelled)
	default:
		outcome = Failed
		err = fmt.Errorf("proof %d partition %d: %w", it.proof.id, it.part, err)
		r.tr.inc(cPartitionsFailed)
	}
	it.t.Outcome, it.t.Err = outcome, err
	pr := it.proof
	if outcome == Failed {
		pr.fail(err)
	}
	if it.t.Verified && it.t.VerifyErr != nil {
		pr.mu.Lock()
		pr.timing.VerifyFailed++
		pr.mu.Unlock()
	} else if it.t.Verified {
		pr.mu.Lock()
		pr.timing.Verified++
		pr.mu.Unlock()
	}
	pr.partitionsEnded(r, 1, outcome)
}

// release returns the admission resources an item still holds.
func (r *run) release(it *item) {
	r.releasePermit(it)
	r.releaseInFlight(it)
	r.releaseBudgetABC(it)
	r.releaseBudgetWires(it)
}

func (r *run) releasePermit(it *item) {
	if it.permit {
		it.permit = false
		r.tr.dec(cPermitsHeld)
		r.permits.Release(1)
	}
}

func (r *run) releaseInFlight(it *item) {
	if it.inFlight {
		it.inFlight = false
		r.inFlight.Release(1)
	}
}

func (r *run) releaseBudgetABC(it *item) {
	if it.resvABC > 0 {
		r.tr.add(cBudgetReserved, -it.resvABC)
		r.budget.Release(it.resvABC)
		it.resvABC = 0
	}
}

func (r *run) releaseBudgetWires(it *item) {
	if it.resvWire > 0 {
		r.tr.add(cBudgetReserved, -it.resvWire)
		r.budget.Release(it.resvWire)
		it.resvWire = 0
	}
}

// fail marks the proof failed and cancels its other partitions: they stop
// at their next cancellation point (synthesis, the channel, the GPU
// worker's check, the backend) and free their buffers, rather than being
// proved for nothing. The first error is the proof's.
func (pr *proofState) fail(err error) {
	pr.mu.Lock()
	first := !pr.failed
	if first {
		pr.failed = true
		pr.timing.Err = err
	}
	pr.mu.Unlock()
	if first {
		pr.cancel(fmt.Errorf("proof %d failed: %w", pr.id, err))
	}
}

// partitionsEnded records n partitions of the proof ending with outcome;
// the call that ends the last one finishes the proof and frees its
// concurrency slot.
func (pr *proofState) partitionsEnded(r *run, n int, outcome Outcome) {
	pr.mu.Lock()
	if outcome == Cancelled {
		pr.cancelled = true
	}
	pr.remaining -= n
	last := pr.remaining == 0
	if last {
		switch {
		case pr.failed:
			pr.timing.Outcome = Failed
		case pr.cancelled:
			pr.timing.Outcome = Cancelled
		default:
			pr.timing.Outcome = Done
		}
		if pr.timing.Outcome == Cancelled {
			pr.timing.Err = context.Cause(pr.ctx)
		}
	}
	outcomeNow := pr.timing.Outcome
	pr.mu.Unlock()
	if !last {
		return
	}
	switch outcomeNow {
	case Done:
		r.tr.inc(cProofsDone)
	case Failed:
		r.tr.inc(cProofsFailed)
	case Cancelled:
		r.tr.inc(cProofsCancelled)
	}
	pr.cancel(nil) // release the context; nothing of the proof runs any more
	r.tr.dec(cProofsInFlight)
	r.proofSlots.Release(1)
}
