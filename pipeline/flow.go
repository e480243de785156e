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

	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/prover"
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
	// tk is the partition's record in the core: what the gates hold for
	// it and which live counters it is in.
	tk Ticket

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
	r.core.ProofStarted()
	return pr
}

// admit passes partition k of pr through the strategy's gates. since is
// when it became next in line.
func (r *run) admit(pr *proofState, k int, since time.Time) (*item, error) {
	ctx := pr.ctx
	it := &item{proof: pr, part: k}
	for {
		// Checked before each try: a partition admitted as its proof
		// failed would start a doomed synthesis.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ok, retry, changed := r.core.TryAdmit(r.now(), &it.tk)
		if ok {
			break
		}
		if err := r.waitGates(ctx, retry, changed); err != nil {
			return nil, err
		}
	}
	now := time.Now()
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

// waitGates waits until the gates may have opened: an event (changed),
// the offset retry (if not 0) or ctx's end, which it returns.
func (r *run) waitGates(ctx context.Context, retry time.Duration, changed <-chan struct{}) error {
	var timeout <-chan time.Time
	if retry > 0 {
		t := time.NewTimer(retry - r.now())
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-changed:
	case <-timeout:
	}
	return nil
}

// synthesizeAndSend synthesizes the partition and offers it to the GPU
// workers through the channel.
func (r *run) synthesizeAndSend(it *item) {
	ctx := it.proof.ctx
	r.core.SynthesisStarted(&it.tk)
	r.observe(EventSynthStart, it)
	t0 := time.Now()
	ds, err := r.opts.Synthesize(ctx, it.proof.id, it.part)
	it.synthEnd = time.Now()
	it.t.Synthesis = it.synthEnd.Sub(t0)
	switch {
	case err == nil && ds == nil:
		err = errors.New("synthesize returned no dataset")
	case err != nil && ds != nil:
		ds.Free() // a dataset that came with an error is not the pipeline's to count
	}
	var abc, wires int64
	if err == nil {
		it.ds = ds
		abc, wires = ds.LiveABCBytes(), ds.LiveWireBytes()
		if r.resv > 0 && abc+wires > r.resv {
			err = fmt.Errorf("synthesized dataset of %d bytes exceeds its budget reservation of %d", abc+wires, r.resv)
		}
	}
	r.core.Synthesized(r.now(), &it.tk, abc, wires)
	if err != nil {
		r.end(it, fmt.Errorf("synthesis: %w", err))
		return
	}

	// The channel's capacity is a semaphore of C slots in front of a Go
	// channel of C: a slot is returned only after the GPU worker has moved
	// the counters, so in_channel never reads above C, and a sender
	// holding a slot never blocks on the channel.
	r.core.WaitingSend(&it.tk)
	r.observe(EventSynthEnd, it)
	if err := r.chanSlots.Acquire(ctx, 1); err != nil {
		r.end(it, err)
		return
	}
	r.core.Sent(r.now(), &it.tk)
	r.observe(EventGPUQueue, it)
	r.ch <- it // the item belongs to a GPU worker from here
}

// gpuWorker takes partitions from the channel until it is closed and runs
// their NTT region on dev; a finalizer waits for each one's MSMs, so the
// worker is free for the next partition as soon as Start returns.
func (r *run) gpuWorker(dev int) {
	for it := range r.ch {
		r.observe(EventGPUPickup, it)
		r.core.Taken(r.now(), &it.tk)
		r.chanSlots.Release(1)
		it.t.QueueWait = time.Since(it.synthEnd)

		ctx := it.proof.ctx
		if err := ctx.Err(); err != nil {
			r.end(it, err)
			continue
		}
		it.t.Device = dev
		r.core.StartBegan(&it.tk)
		r.observe(EventGPUStart, it)
		t0 := time.Now()
		job, err := r.opts.Backend.Start(ctx, dev, it.ds)
		it.t.GPUStart = time.Since(t0)
		r.observe(EventGPUEnd, it)
		r.core.Started(r.now(), &it.tk)
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
			r.core.ABCFreed(r.now(), &it.tk, freed)
			it.t.FreeABC = time.Since(t1)
		}
		it.finalizeFrom = time.Now()
		r.core.Finalizing(&it.tk)
		r.finalizers.Go(func() error { r.finalize(it, job); return nil })
	}
}

// finalize waits for the partition's MSMs and assembly, deallocates its
// dataset and, if asked, verifies the proof.
func (r *run) finalize(it *item, job prover.Job) {
	res, err := job.Wait()
	it.t.Finalize = time.Since(it.finalizeFrom)
	r.core.Finalized(&it.tk)
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

// dealloc frees what is left of the partition's dataset, timing the
// free.
func (r *run) dealloc(it *item) {
	if it.ds == nil {
		return
	}
	t0 := time.Now()
	abc, wires := it.ds.Free()
	it.ds = nil
	r.core.Deallocated(r.now(), &it.tk, abc, wires)
	it.t.Dealloc = time.Since(t0)
	it.t.Ended = time.Since(r.start)
}

// end finishes a partition on any path: it frees its dataset, records its
// outcome, has the core return whatever the partition still holds and
// tells its proof. A partition whose proof context is done when it fails
// counts as cancelled: the failure is a consequence, not a cause.
func (r *run) end(it *item, err error) {
	r.dealloc(it)
	if it.t.Ended == 0 { // it never held a dataset
		it.t.Ended = time.Since(r.start)
	}
	outcome := Done
	switch {
	case err == nil:
	case it.proof.ctx.Err() != nil:
		outcome = Cancelled
		err = context.Cause(it.proof.ctx)
	default:
		outcome = Failed
		err = fmt.Errorf("proof %d partition %d: %w", it.proof.id, it.part, err)
	}
	r.core.Ended(r.now(), &it.tk, outcome)
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
	r.core.ProofEnded(outcomeNow)
	pr.cancel(nil) // release the context; nothing of the proof runs any more
	r.proofSlots.Release(1)
}
