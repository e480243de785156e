package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/provebench/provebench/pipeline/config"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/prover"
)

// Options configure one run of the engine.
type Options struct {
	// Backend proves the partitions. It must already be Loaded with the
	// proving key; the engine does not Close it.
	Backend  prover.Backend
	Workload Workload
	Config   Config
	// Synthesize makes one partition's dataset; the engine owns it from
	// then on. Default: circuit.SynthesizePinned with Workload.Circuit(),
	// the seed circuit.Seed(Workload.Seed, proof, partition) and the
	// backend's HostPinner, if it has one.
	Synthesize func(ctx context.Context, proof, partition int) (*dataset.Dataset, error)
	// Verify, if set, checks each partition's proof against its public
	// inputs (copied before the dataset is freed). Failures are counted in
	// the report, not fatal.
	Verify func(public []fr.Element, p *groth16.Proof) error
	// Observe, if set, is told of each partition's steps (see Event).
	Observe Observer
}

// Engine runs one batch of proofs through the pipeline.
type Engine struct {
	opts    Options
	tracker *Tracker
	ran     atomic.Bool
	// witness is the cached synthesis's witness (Prepare), nil otherwise.
	witness *dataset.Dataset
	// ownSynthesis: Options.Synthesize is this engine's default synthesis,
	// bound to it (Next binds its own).
	ownSynthesis bool
}

// New validates opts and returns an engine ready to Run. Configuration
// errors join one *FieldError per problem, each naming its field
// ("pipeline.partition_workers: must be >= 1 for strategy hold (got 0)").
func New(opts Options) (*Engine, error) {
	if opts.Backend == nil {
		return nil, errors.New("pipeline: no backend")
	}
	if n := opts.Backend.Devices(); n < 1 {
		return nil, fmt.Errorf("pipeline: backend %s has %d devices", opts.Backend.Name(), n)
	}
	opts.Config = opts.Config.Resolved()
	if err := errors.Join(opts.Workload.Validate(), opts.Config.Validate(opts.Workload)); err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, tracker: NewTracker(), ownSynthesis: opts.Synthesize == nil}
	if e.ownSynthesis {
		e.opts.Synthesize = e.synthesize
	}
	return e, nil
}

// memory is where the default synthesis puts datasets: the backend's
// memory (a reserved pool of page-locked memory), locked per dataset when
// the backend asks for that instead.
func (e *Engine) memory() circuit.Memory {
	var mem circuit.Memory
	if ha, ok := e.opts.Backend.(prover.HostAllocator); ok {
		mem.Alloc = ha.HostAllocator()
	}
	if hp, ok := e.opts.Backend.(prover.HostPinner); ok {
		mem.Pin = hp.HostPinner()
	}
	return mem
}

// synthesize is the default Options.Synthesize: the circuit's synthesis,
// or with Workload.Synthesis "cached" a copy of the witness Prepare made.
func (e *Engine) synthesize(ctx context.Context, proof, partition int) (*dataset.Dataset, error) {
	w := e.opts.Workload
	params := w.Circuit()
	if !w.Cached() {
		return circuit.SynthesizeInto(ctx, params, circuit.Seed(w.Seed, proof, partition), proof, partition, e.memory())
	}
	if e.witness == nil {
		return nil, errors.New("pipeline: cached synthesis before Prepare")
	}
	ds, err := circuit.NewDataset(params, proof, partition, e.memory())
	if err != nil {
		return nil, err
	}
	if err := ds.CopyFrom(e.witness); err != nil {
		ds.Free()
		return nil, err
	}
	return ds, nil
}

// Prepare does what must happen before the measured run: with cached
// synthesis, it synthesizes the witness every partition copies (in
// ordinary memory, resident until Close). Run calls it if nobody did.
func (e *Engine) Prepare(ctx context.Context) error {
	if !e.opts.Workload.Cached() || e.witness != nil {
		return nil
	}
	w := e.opts.Workload
	ds, err := circuit.Synthesize(ctx, w.Circuit(), circuit.Seed(w.Seed, 0, 0), 0, 0)
	if err != nil {
		return fmt.Errorf("pipeline: cached witness: %w", err)
	}
	e.witness = ds
	return nil
}

// WarmUp proves one partition on every device outside the run, as a
// daemon that has served work before would have: the device's kernels
// loaded, its memory pools grown, the key's pages touched. The partition
// is not counted anywhere.
func (e *Engine) WarmUp(ctx context.Context) error {
	if err := e.Prepare(ctx); err != nil {
		return err
	}
	for dev := range e.opts.Backend.Devices() {
		ds, err := e.opts.Synthesize(ctx, -1, dev)
		if err != nil {
			return fmt.Errorf("pipeline: warm-up partition: %w", err)
		}
		job, err := e.opts.Backend.Start(ctx, dev, ds)
		if err == nil {
			_, err = job.Wait()
		}
		ds.Free()
		if err != nil {
			return fmt.Errorf("pipeline: warm-up partition on device %d: %w", dev, err)
		}
	}
	return nil
}

// Close releases what Prepare made.
func (e *Engine) Close() {
	if e.witness != nil {
		e.witness.Free()
		e.witness = nil
	}
}

// Next returns a fresh engine for another run of the same batch, on the same
// backend, with what Prepare made (the cached witness) handed over to it,
// and new counters. A prover that stays warm between runs (a daemon, or
// provebench's repetitions served by one process) pays for Prepare once;
// each run still starts from empty counters and gates. The receiver must
// not Run afterwards, and its Close no longer frees the witness.
func (e *Engine) Next() *Engine {
	n := &Engine{opts: e.opts, tracker: NewTracker(), witness: e.witness, ownSynthesis: e.ownSynthesis}
	if n.ownSynthesis {
		n.opts.Synthesize = n.synthesize
	}
	e.witness = nil
	return n
}

// Config is the configuration the engine runs, defaults resolved.
func (e *Engine) Config() Config { return e.opts.Config }

// Tracker returns the engine's counters: valid before, during and after Run.
func (e *Engine) Tracker() *Tracker { return e.tracker }

// Run proves the batch. It returns when every partition has ended and
// every buffer has been freed, with a report of what happened. Failed
// proofs are in the report, not in the error: the error is non-nil only
// when ctx was cancelled before the batch was complete (the report then
// covers what ran). An Engine runs once.
func (e *Engine) Run(ctx context.Context) (*Report, error) {
	if !e.ran.CompareAndSwap(false, true) {
		return nil, errors.New("pipeline: an Engine runs once; make a new one for another run")
	}
	if err := e.Prepare(ctx); err != nil {
		return nil, err
	}
	r := newRun(e.opts, e.tracker)
	r.execute(ctx)
	rep := r.report()
	if err := ctx.Err(); err != nil && (rep.ProofsCancelled > 0 || rep.ProofsNotStarted > 0) {
		return rep, fmt.Errorf("pipeline: run cancelled after %d of %d proofs: %w",
			rep.ProofsDone+rep.ProofsFailed, rep.Workload.Proofs, context.Cause(ctx))
	}
	return rep, nil
}

// run is the state of one Run.
type run struct {
	opts Options
	w    Workload
	c    Config
	core *Core

	start time.Time
	// ch and chanSlots are the bounded channel to the GPU workers (see
	// synthesizeAndSend).
	ch        chan *item
	chanSlots *semaphore.Weighted

	proofSlots *semaphore.Weighted // Workload.Concurrency

	// resv is what the budget gate reserves per partition (0 without one).
	resv int64

	finalizers errgroup.Group

	proofs   []*proofState     // nil for proofs never started
	timings  []PartitionTiming // Proofs*Partitions, by proof then partition
	pacerLog []PacerSample
}

func newRun(opts Options, tr *Tracker) *run {
	w, c := opts.Workload, opts.Config
	abc, wires := config.DatasetBytes(w)
	r := &run{
		opts:       opts,
		w:          w,
		c:          c,
		core:       NewCore(c, tr, abc, wires),
		ch:         make(chan *item, c.ChannelCapacity),
		chanSlots:  semaphore.NewWeighted(int64(c.ChannelCapacity)),
		proofSlots: semaphore.NewWeighted(int64(w.Concurrency)),
		proofs:     make([]*proofState, w.Proofs),
		timings:    make([]PartitionTiming, w.Proofs*w.Partitions),
	}
	if c.Strategy.Has(config.Budget) {
		r.resv = abc + wires
	}
	return r
}

// now is the offset from the run's start, the core's clock.
func (r *run) now() time.Duration { return time.Since(r.start) }

// execute runs the stages to completion: the dispatcher, the GPU workers
// and the finalizers they start, and the gates' control loop.
func (r *run) execute(ctx context.Context) {
	r.start = time.Now()
	var control errgroup.Group
	cctx, stopControl := context.WithCancel(ctx)
	if iv := r.core.TickInterval(); iv > 0 {
		control.Go(func() error { r.tick(cctx, iv); return nil })
	}

	var stages errgroup.Group
	stages.Go(func() error { r.dispatch(ctx); return nil })
	for dev := range r.opts.Backend.Devices() {
		for range r.c.GPUWorkers {
			stages.Go(func() error { r.gpuWorker(dev); return nil })
		}
	}
	_ = stages.Wait()       // the stages report through the tracker, not errors
	_ = r.finalizers.Wait() // every Go happened in a GPU worker, all done

	stopControl()
	_ = control.Wait()
	r.pacerLog = r.core.PacerSamples()
}

// tick runs the gates' control loop every iv until ctx is done.
func (r *run) tick(ctx context.Context, iv time.Duration) {
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.core.Tick(r.now())
		}
	}
}

// report assembles the Report once every stage has returned.
func (r *run) report() *Report {
	rep := &Report{
		Backend:  r.opts.Backend.Name(),
		Devices:  r.opts.Backend.Devices(),
		Workload: r.w,
		Config:   r.c,
		Elapsed:  time.Since(r.start),
		Pacer:    r.pacerLog,
	}
	first, last := time.Duration(-1), time.Duration(0)
	for _, pr := range r.proofs {
		if pr == nil {
			rep.ProofsNotStarted++
			rep.PartitionsNotStarted += r.w.Partitions
			continue
		}
		pt := pr.timing
		pt.Ended = 0
		for k := range pr.admitted {
			t := r.timings[pr.id*r.w.Partitions+k]
			rep.Partitions = append(rep.Partitions, t)
			switch t.Outcome {
			case Done:
				rep.PartitionsDone++
			case Failed:
				rep.PartitionsFailed++
			case Cancelled:
				rep.PartitionsCancelled++
			}
			if t.Verified {
				if t.VerifyErr == nil {
					rep.PartitionsVerified++
				} else {
					rep.PartitionsVerifyFailed++
				}
			}
			if first < 0 || t.Admitted < first {
				first = t.Admitted
			}
			end := t.End()
			last = max(last, end)
			pt.Ended = max(pt.Ended, end)
		}
		rep.PartitionsNotStarted += r.w.Partitions - pr.admitted
		switch pt.Outcome {
		case Done:
			rep.ProofsDone++
			if r.opts.Verify != nil {
				if pt.VerifyFailed == 0 {
					rep.ProofsVerified++
				} else {
					rep.ProofsVerifyFailed++
				}
			}
		case Failed:
			rep.ProofsFailed++
		case Cancelled:
			rep.ProofsCancelled++
		}
		if pr.admitted == 0 {
			pt.Ended = pt.Started
		}
		rep.Proofs = append(rep.Proofs, pt)
	}
	if first >= 0 {
		rep.Wall = last - first
	}
	return rep
}
