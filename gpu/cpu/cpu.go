// Package cpu is the CPU prover backend: gnark-crypto's FFT and MultiExp on
// all cores. It runs anywhere and is provebench's default.
//
// Each simulated device is an executor that runs one kernel at a time on the
// device's threads, like a GPU stream: the NTT region of a partition is one
// kernel, its five MSMs are the next. That keeps queue depth and busy time
// meaningful, and lets several "devices" stand in for a multi-GPU host in
// tests.
package cpu

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/parallel"
	"math/big"

	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/hostmem"
	"github.com/provebench/provebench/gpu/prover"
)

// Options configure the backend.
type Options struct {
	// Devices is the number of simulated devices (default 1).
	Devices int
	// Threads is the number of threads each device's kernels use (default
	// GOMAXPROCS divided among the devices).
	Threads int
	// Rand supplies the blinding (r, s); crypto/rand when nil. A seeded
	// reader makes proofs reproducible.
	Rand io.Reader
}

// Backend is the CPU prover.
type Backend struct {
	threads int
	devs    []*device

	randMu sync.Mutex
	rand   io.Reader

	mu   sync.RWMutex
	pk   *groth16.ProvingKey
	dom  *fft.Domain
	zInv fr.Element // 1 / Z(g) = 1 / (g^N - 1) on the coset g<w>
}

type device struct {
	exec *executor
	mem  atomic.Int64
}

var _ prover.Backend = (*Backend)(nil)

// New starts the backend's devices.
func New(opts Options) (*Backend, error) {
	if opts.Devices == 0 {
		opts.Devices = 1
	}
	if opts.Devices < 0 {
		return nil, fmt.Errorf("cpu backend: %d devices", opts.Devices)
	}
	if opts.Threads <= 0 {
		opts.Threads = max(1, runtime.GOMAXPROCS(0)/opts.Devices)
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	b := &Backend{threads: opts.Threads, rand: opts.Rand}
	for range opts.Devices {
		b.devs = append(b.devs, &device{exec: newExecutor()})
	}
	return b, nil
}

// Name implements prover.Backend.
func (b *Backend) Name() string { return "cpu" }

// Devices implements prover.Backend.
func (b *Backend) Devices() int { return len(b.devs) }

// Load implements prover.Backend: the key stays where it is (host memory or a
// file mapping); the FFT domain's tables are built once here.
func (b *Backend) Load(ctx context.Context, pk *groth16.ProvingKey) error {
	if err := pk.CheckShape(); err != nil {
		return err
	}
	dom := fft.NewDomain(uint64(pk.Domain))
	var zg fr.Element
	zg.Exp(dom.FrMultiplicativeGen, bigInt(pk.Domain))
	var one fr.Element
	one.SetOne()
	zg.Sub(&zg, &one)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pk, b.dom = pk, dom
	b.zInv.Inverse(&zg)
	return ctx.Err()
}

// Stats implements prover.Backend.
func (b *Backend) Stats(dev int) prover.DeviceStats {
	if dev < 0 || dev >= len(b.devs) {
		return prover.DeviceStats{}
	}
	d := b.devs[dev]
	busy, span := d.exec.busy()
	return prover.DeviceStats{
		MemoryBytes: d.mem.Load(),
		Busy:        busy,
		Span:        span,
		Queued:      int(d.exec.queued.Load()),
	}
}

// Close implements prover.Backend.
func (b *Backend) Close() error {
	for _, d := range b.devs {
		d.exec.close()
	}
	return nil
}

// Start implements prover.Backend.
func (b *Backend) Start(ctx context.Context, dev int, ds *dataset.Dataset) (prover.Job, error) {
	b.mu.RLock()
	pk, dom, zInv := b.pk, b.dom, b.zInv
	b.mu.RUnlock()
	switch {
	case pk == nil:
		return nil, errors.New("cpu backend: Start before Load")
	case dev < 0 || dev >= len(b.devs):
		return nil, fmt.Errorf("cpu backend: device %d of %d", dev, len(b.devs))
	case ds.N != pk.Domain:
		return nil, fmt.Errorf("cpu backend: dataset of 2^%d constraints, key for %d", ds.N, pk.Domain)
	}
	d := b.devs[dev]
	a, bv, c, err := ds.ABC()
	if err != nil {
		return nil, fmt.Errorf("cpu backend: start: %w", err)
	}
	wires, err := ds.Wires()
	if err != nil {
		return nil, fmt.Errorf("cpu backend: start: %w", err)
	}
	hBuf, h, err := hostmem.AllocSlice[fr.Element](ds.N)
	if err != nil {
		return nil, fmt.Errorf("cpu backend: quotient buffer: %w", err)
	}
	d.mem.Add(hBuf.Size())
	freeH := func() {
		if n, _ := hBuf.Free(); n > 0 {
			d.mem.Add(-n)
		}
	}

	j := &job{b: b, pk: pk}
	var nttErr error
	k, err := d.exec.submit(func() {
		if nttErr = ctx.Err(); nttErr != nil {
			return
		}
		t := time.Now()
		b.quotient(dom, &zInv, a, bv, c, h)
		j.stages = append(j.stages, prover.Stage{Name: prover.StageNTT, Duration: time.Since(t)})
	})
	if err != nil {
		freeH()
		return nil, err
	}
	<-k.done
	j.stages = append([]prover.Stage{{Name: prover.StageQueueWait, Duration: k.waited}}, j.stages...)
	if nttErr != nil {
		freeH()
		return nil, fmt.Errorf("cpu backend: NTT region: %w", nttErr)
	}

	j.msm, err = d.exec.submit(func() {
		defer freeH()
		j.err = b.msms(ctx, pk, wires, h[:ds.N-1], &j.sums, &j.stages)
	})
	if err != nil {
		freeH()
		return nil, err
	}
	return j, nil
}

// quotient computes the coefficients of h = (a*b - c) / Z into h, using a,
// b and c as scratch: each is interpolated (inverse NTT) and evaluated on the
// coset g<w> (coset NTT), where Z is the constant g^N - 1; the quotient is
// then interpolated back from the coset.
func (b *Backend) quotient(dom *fft.Domain, zInv *fr.Element, a, bv, c, h []fr.Element) {
	tasks := fft.WithNbTasks(b.threads)
	for _, v := range [][]fr.Element{a, bv, c} {
		dom.FFTInverse(v, fft.DIF, tasks)
		dom.FFT(v, fft.DIT, fft.OnCoset(), tasks)
	}
	parallel.Execute(len(h), func(start, end int) {
		for i := start; i < end; i++ {
			h[i].Mul(&a[i], &bv[i]).Sub(&h[i], &c[i]).Mul(&h[i], zInv)
		}
	}, b.threads)
	dom.FFTInverse(h, fft.DIF, fft.OnCoset(), tasks)
	fft.BitReverse(h)
}

// msms runs the five MSMs of a partition, checking for cancellation between
// them. Each MSM over the wires is split where the circuit puts its bits
// (circuit.Params.BitWires): a full MSM over the full-width wires and a sum
// of the points of the bits that are one. B has terms only for the one wire
// and the bits, so its full part is a single point.
func (b *Backend) msms(ctx context.Context, pk *groth16.ProvingKey, wires, h []fr.Element, s *groth16.Sums, stages *[]prover.Stage) error {
	cfg := ecc.MultiExpConfig{NbTasks: b.threads}
	full := pk.Params().BitWires()
	private := wires[1+pk.NumPublic:]
	privFull := full - (1 + pk.NumPublic)
	steps := []struct {
		name string
		run  func() error
	}{
		{prover.StageMSMA, func() error {
			return splitMSM(&s.A, pk.A, wires, full, cfg, b.threads, (*bls12381.G1Jac).MultiExp)
		}},
		{prover.StageMSMB1, func() error { return oneWireAndBits(&s.B1, pk.B1, wires, full, b.threads) }},
		{prover.StageMSMB2, func() error { return oneWireAndBits(&s.B2, pk.B2, wires, full, b.threads) }},
		{prover.StageMSML, func() error {
			return splitMSM(&s.L, pk.L, private, privFull, cfg, b.threads, (*bls12381.G1Jac).MultiExp)
		}},
		{prover.StageMSMH, func() error { _, err := s.H.MultiExp(pk.H, h, cfg); return err }},
	}
	for _, st := range steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("cpu backend: %s: %w", st.name, err)
		}
		t := time.Now()
		if err := st.run(); err != nil {
			return fmt.Errorf("cpu backend: %s: %w", st.name, err)
		}
		*stages = append(*stages, prover.Stage{Name: st.name, Duration: time.Since(t)})
	}
	return nil
}

// job is a partition whose MSMs are queued.
type job struct {
	b      *Backend
	pk     *groth16.ProvingKey
	msm    *kernel
	sums   groth16.Sums
	stages []prover.Stage
	err    error
}

// Wait implements prover.Job.
func (j *job) Wait() (prover.Result, error) {
	<-j.msm.done
	if j.err != nil {
		return prover.Result{}, j.err
	}
	t := time.Now()
	j.b.randMu.Lock()
	bl, err := groth16.NewBlinding(j.b.rand)
	j.b.randMu.Unlock()
	if err != nil {
		return prover.Result{}, err
	}
	p := groth16.Assemble(j.pk, &j.sums, bl)
	stages := append(j.stages, prover.Stage{Name: prover.StageAssemble, Duration: time.Since(t)})
	return prover.Result{Proof: p, Stages: stages}, nil
}

func bigInt(n int) *big.Int { return big.NewInt(int64(n)) }
