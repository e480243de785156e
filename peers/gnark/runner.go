package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

// prover is gnark's Groth16 on one backend (prover_cpu.go, prover_icicle.go).
type prover interface {
	// setup makes the key: gnark's real setup (with its verifying key) or
	// its DummySetup (same sizes, one point repeated; no verifying key).
	setup(ccs constraint.ConstraintSystem, real bool) (groth16.VerifyingKey, error)
	// prove solves the witness and proves, as gnark's Prove does.
	prove(w witness.Witness) (groth16.Proof, error)
	// deviceMemory is the device's used and total memory, when there is one.
	deviceMemory() (used, total uint64, ok bool)
	close()
}

// runner is a compiled circuit and its key on one prover.
type runner struct {
	o     *options
	shape shape
	ccs   constraint.ConstraintSystem
	p     prover
	vk    groth16.VerifyingKey
	ev    gnarkEvents
	out   *lines // stdout: the peer's own lines
	tl    *timeline
}

func newRunner(o *options, stdout, stderr io.Writer) (*runner, error) {
	s, err := newShape(o.constraints, o.bitsPerMille)
	if err != nil {
		return nil, err
	}
	r := &runner{o: o, shape: s, out: &lines{w: stdout}}
	if o.timeline && o.bench == 0 {
		r.tl = &timeline{w: stderr}
	}
	r.ev.install()
	t := time.Now()
	r.ccs, err = frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, newChain(s))
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	compile := time.Since(t)
	if got := r.ccs.GetNbConstraints(); got != s.n {
		return nil, fmt.Errorf("compile: %d constraints, want %d", got, s.n)
	}
	if r.p, err = newProver(o); err != nil {
		return nil, err
	}
	kind := keyRandom
	if o.realKey() {
		kind = keySetup
	}
	t = time.Now()
	if r.vk, err = r.p.setup(r.ccs, o.realKey()); err != nil {
		return nil, fmt.Errorf("%s key: %w", kind, err)
	}
	r.out.printf("PEER_SETUP prover=%s constraints=%d wires=%d bits=%d key=%s compile_ms=%.1f setup_ms=%.1f",
		proverName, s.n, s.numWires(), s.numBits(), kind, msOf(compile), msOf(time.Since(t)))
	return r, nil
}

// partition is one proved partition's figures.
type partition struct {
	proof, index int
	witness      time.Duration // the bits and the chain, encoded as gnark's witness
	solve        time.Duration // gnark's solver, inside Prove
	prove        time.Duration // the rest of Prove: the proof from the solved witness
	stages       map[string]time.Duration
	pr           groth16.Proof
	pub          witness.Witness
}

// provePartition makes one partition's witness and proves it, printing its
// TIMELINE events: SYNTH_START before the witness, SYNTH_END and GPU_START
// when gnark's solver is done, GPU_END when Prove returns.
func (r *runner) provePartition(ctx context.Context, proof, index int, keep bool) (*partition, error) {
	t0 := time.Now()
	r.tl.event(t0, "SYNTH_START", proof, index)
	a, err := assign(ctx, r.shape, partitionSeed(r.o.seed, proof, index), r.o.rounds)
	if err != nil {
		return nil, err
	}
	w, err := a.witness()
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	r.ev.begin(func(at time.Time) {
		r.tl.event(at, "SYNTH_END", proof, index)
		r.tl.event(at, "GPU_START", proof, index)
	})
	pr, err := r.p.prove(w)
	t2 := time.Now()
	stages, solved := r.ev.end()
	if err != nil {
		return nil, fmt.Errorf("proof %d partition %d: %w", proof, index, err)
	}
	if solved.IsZero() {
		return nil, fmt.Errorf("proof %d partition %d: gnark did not log its solver's end (%q)", proof, index, msgSolverDone)
	}
	r.tl.event(t2, "GPU_END", proof, index)
	p := &partition{proof: proof, index: index, witness: t1.Sub(t0), solve: solved.Sub(t1), prove: t2.Sub(solved), stages: stages}
	if keep {
		p.pr = pr
		if p.pub, err = a.public(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// warmUp proves partitions outside every measurement: the first Prove
// loads ICICLE's backend, puts the key on the device and initialises the
// NTT domain, as a prover daemon has done before work arrives.
func (r *runner) warmUp(ctx context.Context, n int) error {
	tl := r.tl
	r.tl = nil
	defer func() { r.tl = tl }()
	for i := range n {
		if _, err := r.provePartition(ctx, -1, i, false); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	return nil
}

// run proves proofs x partitions partitions one after the other, then
// verifies them (outside the measured time).
func (r *runner) run(ctx context.Context) error {
	if err := r.warmUp(ctx, r.o.warmups); err != nil {
		return err
	}
	r.deviceMemory("ready")
	stopPoll := r.pollDeviceMemory()
	verify := r.o.verifying()
	var done []*partition
	start := time.Now()
	if r.tl != nil {
		r.tl.start = start
	}
	var err error
	for proof := 0; proof < r.o.proofs && err == nil; proof++ {
		for i := 0; i < r.o.partitions; i++ {
			if err = ctx.Err(); err != nil {
				break
			}
			var p *partition
			if p, err = r.provePartition(ctx, proof, i, verify); err != nil {
				break
			}
			r.printPartition(p)
			done = append(done, p)
		}
	}
	wall := time.Since(start)
	stopPoll()
	if err != nil {
		return err
	}
	r.deviceMemory("end")
	r.out.printf("PEER_SUMMARY prover=%s partitions=%d wall_ms=%.1f ms_per_partition=%.1f",
		proverName, len(done), msOf(wall), msOf(wall)/float64(len(done)))
	if !verify {
		return nil
	}
	return r.verify(done)
}

func (r *runner) printPartition(p *partition) {
	var b strings.Builder
	fmt.Fprintf(&b, "PEER_PARTITION proof=%d partition=%d witness_ms=%.3f solve_ms=%.3f prove_ms=%.3f",
		p.proof, p.index, msOf(p.witness), msOf(p.solve), msOf(p.prove))
	for _, name := range slices.Sorted(maps.Keys(p.stages)) {
		fmt.Fprintf(&b, " gnark_%s_ms=%.3f", name, msOf(p.stages[name]))
	}
	r.out.printf("%s", b.String())
}

// verify checks every proof with gnark's verifier.
func (r *runner) verify(ps []*partition) error {
	var errs []error
	for _, p := range ps {
		if err := groth16.Verify(p.pr, r.vk, p.pub); err != nil {
			errs = append(errs, fmt.Errorf("proof %d partition %d did not verify: %w", p.proof, p.index, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.out.printf("PEER_VERIFIED proofs=%d", len(ps))
	return nil
}

// deviceMemory prints the device memory ICICLE reports, if any.
func (r *runner) deviceMemory(when string) {
	if used, total, ok := r.p.deviceMemory(); ok {
		r.out.printf("PEER_DEVICE_MEMORY when=%s used_bytes=%d total_bytes=%d", when, used, total)
	}
}

// pollDeviceMemory prints the device memory every interval until stopped.
func (r *runner) pollDeviceMemory() (stop func()) {
	if r.o.memInterval <= 0 {
		return func() {}
	}
	if _, _, ok := r.p.deviceMemory(); !ok {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(r.o.memInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				r.deviceMemory("run")
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
