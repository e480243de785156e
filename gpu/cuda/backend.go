//go:build cuda

package cuda

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	icicle "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"

	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/hostmem"
	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/gpu/shape"
)

// Options configure the backend.
type Options struct {
	// DeviceType is ICICLE's device type: "CUDA" (the default) or "CPU",
	// ICICLE's reference device, which runs the same code path on hosts
	// without a GPU (for tests: its MSMs are slow).
	DeviceType string
	// Devices are the ids of the devices to use, each with its own
	// threads, streams and copy of the proving key; nil means all devices
	// of the type.
	Devices []int
	// Rand supplies the blinding (r, s); crypto/rand when nil. A seeded
	// reader makes proofs reproducible, and equal to the CPU backend's.
	Rand io.Reader
	// QueueDepth is the most partitions that may wait for a device, copied
	// or being copied, while another one runs; Start blocks while the
	// device's queue is full. Default 1: the next partition uploads while
	// the current one runs, which keeps the device busy as long as an
	// upload takes less time than a partition's device work, and bounds
	// the device memory partitions take to about two datasets.
	QueueDepth int
	// PinUploads page-locks each dataset's buffers while Start copies them
	// (cuMemHostRegister): the copies then run as direct DMA instead of
	// through the driver's staging buffer, at the cost of locking and
	// unlocking the pages each time, on the GPU worker's path. CUDA only.
	// Datasets already page-locked (PinDatasets) are copied as they are.
	PinUploads bool
	// PinDatasets makes HostPinner return a Pinner: the pipeline then
	// synthesizes into page-locked memory, paying the locking on the
	// synthesis workers, and every upload is a DMA. CUDA only.
	PinDatasets bool
	// PrecomputeFactor (> 1) keeps that many precomputed multiples of every
	// base of the full-width MSMs (A and L over the full-width wires, H)
	// on each device: more device memory, fewer additions per MSM. 0 or 1:
	// none.
	PrecomputeFactor int
	// Sync is how host threads wait for the device: SyncBlock (sleep until
	// the device signals), SyncSpin or SyncYield; "" leaves CUDA's own
	// choice (it spins while there are more cores than busy contexts).
	// CUDA only. Spinning shows in the process's CPU time, by as much as
	// the device works, and takes cores from synthesis.
	Sync string
	// BackendDir is the folder of ICICLE's CUDA backend libraries
	// (libicicle_backend_cuda_*.so); $ICICLE_BACKEND_INSTALL_DIR when
	// empty. Unused for the CPU device, which is built into the front end.
	BackendDir string
}

// SyncFromEnv is $PROVEBENCH_CUDA_SYNC, how host threads wait for the
// device (SyncBlock, SyncSpin, SyncYield), or SyncBlock when unset.
// "default" leaves CUDA's own choice (Options.Sync "").
func SyncFromEnv() (string, error) {
	v := os.Getenv("PROVEBENCH_CUDA_SYNC")
	switch v {
	case "":
		return SyncBlock, nil
	case "default":
		return "", nil
	case SyncBlock, SyncSpin, SyncYield:
		return v, nil
	}
	return "", fmt.Errorf("PROVEBENCH_CUDA_SYNC=%q: want %s, %s, %s or default", v, SyncBlock, SyncSpin, SyncYield)
}

// PrecomputeFactorFromEnv is $PROVEBENCH_MSM_PRECOMPUTE, the precompute
// factor a user or a benchmark can set for a run, or
// shape.DefaultPrecomputeFactor when it is unset.
func PrecomputeFactorFromEnv() (int, error) {
	v := os.Getenv("PROVEBENCH_MSM_PRECOMPUTE")
	if v == "" {
		return shape.DefaultPrecomputeFactor, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("PROVEBENCH_MSM_PRECOMPUTE=%q: want a positive integer", v)
	}
	return n, nil
}

// Backend is the ICICLE prover.
type Backend struct {
	deviceType string
	drv        *driver // nil on ICICLE's CPU device
	devs       []*device
	pinUploads bool
	precompute int
	sync       string // Options.Sync
	// pinner page-locks datasets (Options.PinDatasets).
	pinner *pinner
	// pool is the page-locked memory reserved for datasets (ReserveHost);
	// nil until then. unpooled counts the buffers served from ordinary
	// memory because the pool was empty.
	pool     *hostmem.Pool
	unpooled atomic.Int64

	// setup times the steps of New and Load (SetupStages).
	setupMu sync.Mutex
	setup   []prover.Stage

	randMu sync.Mutex
	rand   io.Reader

	mu     sync.RWMutex
	key    *keyInfo
	closed bool
}

// keyInfo is the loaded key and the constants proofs made with it need.
type keyInfo struct {
	pk *groth16.ProvingKey
	// cosetGen is w_2N, the generator of the coset the quotient is
	// evaluated on.
	cosetGen fr.Element
	// wireScale is 1/R: the wire MSMs run on Montgomery representations
	// z*R, so their sums come out multiplied by R.
	wireScale big.Int
	// quotientScale is 1/(Z*R), Z = w_2N^N - 1 the vanishing polynomial on
	// the coset: the device never divides by Z, and the quotient's
	// coefficients stay in Montgomery representation.
	quotientScale big.Int
}

var (
	_ prover.Backend       = (*Backend)(nil)
	_ prover.HostPinner    = (*Backend)(nil)
	_ prover.HostAllocator = (*Backend)(nil)
	_ prover.HostReserver  = (*Backend)(nil)
	_ prover.SetupReporter = (*Backend)(nil)
)

// timed runs fn and records its duration as a setup stage.
func (b *Backend) timed(name string, fn func() error) error {
	t := time.Now()
	err := fn()
	b.setupMu.Lock()
	b.setup = append(b.setup, prover.Stage{Name: name, Duration: time.Since(t)})
	b.setupMu.Unlock()
	return err
}

// SetupStages implements prover.SetupReporter: the backend's start-up, step by
// step: loading ICICLE's CUDA libraries, opening the driver, starting each
// device (context, streams, a self-test MSM in G1 and G2: the first kernel
// launches), then Load's NTT domain, key upload, precomputation and the
// wait for the device to finish them.
func (b *Backend) SetupStages() []prover.Stage {
	b.setupMu.Lock()
	defer b.setupMu.Unlock()
	return slices.Clone(b.setup)
}

// Settings implements prover.Describer: the precompute factor each device
// loaded the key with (lowered from Options.PrecomputeFactor where the
// device's memory is short) and how host threads wait for the devices.
func (b *Backend) Settings() map[string]string {
	m := map[string]string{"sync": b.sync}
	if b.sync == "" {
		m["sync"] = "default"
	}
	for _, d := range b.devs {
		m[fmt.Sprintf("device%d_precompute_factor", d.id)] = strconv.Itoa(d.precomputeFactor())
	}
	return m
}

// ReserveHost implements prover.HostReserver: it page-locks count buffers of
// each size for datasets, before the work, so that no page is locked
// beside a working device. Without page-locked datasets (PinDatasets off,
// or ICICLE's CPU device) there is nothing to reserve.
func (b *Backend) ReserveHost(count int, sizes ...int64) error {
	if b.pinner == nil || count <= 0 {
		return nil
	}
	if b.pool == nil {
		b.pool = hostmem.NewPool(b.pinner)
	}
	return b.pool.Reserve(count, sizes...)
}

// HostPool implements prover.HostReserver.
func (b *Backend) HostPool() hostmem.PoolStats { return b.pool.Stats() }

// HostAllocator implements prover.HostAllocator: once memory is reserved,
// datasets come from the pool, and from ordinary (pageable) memory when it
// is empty: a partition beyond the reserve uploads through the driver's
// staging buffer rather than lock pages beside a working device.
func (b *Backend) HostAllocator() dataset.Allocator {
	if b.pool == nil {
		return nil
	}
	return func(size int64) (*hostmem.Buffer, error) {
		if buf, ok := b.pool.Get(size); ok {
			return buf, nil
		}
		b.unpooled.Add(1)
		return hostmem.Alloc(size)
	}
}

// Unpooled is how many dataset buffers came from ordinary memory because
// the reserved pool was empty.
func (b *Backend) Unpooled() int64 { return b.unpooled.Load() }

// New loads ICICLE's device backend and starts the devices.
func New(opts Options) (*Backend, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	typ := opts.DeviceType
	b := &Backend{deviceType: typ, rand: opts.Rand, pinUploads: opts.PinUploads, precompute: opts.PrecomputeFactor, sync: opts.Sync}
	if typ == DeviceCUDA {
		if err := b.openCUDA(opts); err != nil {
			return nil, err
		}
	}
	ids, err := deviceIDs(typ, opts.Devices)
	if err != nil {
		b.drv.close()
		return nil, fmt.Errorf("cuda backend: %w", err)
	}
	if err := b.startDevices(typ, ids, opts.QueueDepth); err != nil {
		_ = b.Close()
		return nil, err
	}
	if opts.PinDatasets {
		if err := b.openPinner(); err != nil {
			_ = b.Close()
			return nil, err
		}
	}
	return b, nil
}

// withDefaults checks opts and fills in the defaults: the CUDA device,
// crypto/rand and a queue depth of 1.
func withDefaults(opts Options) (Options, error) {
	if opts.DeviceType == "" {
		opts.DeviceType = DeviceCUDA
	}
	typ := opts.DeviceType
	if typ != DeviceCUDA && typ != DeviceCPU {
		return opts, fmt.Errorf("cuda backend: device type %q: want %s or %s", typ, DeviceCUDA, DeviceCPU)
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	if opts.QueueDepth == 0 {
		opts.QueueDepth = 1
	}
	if opts.QueueDepth < 0 {
		return opts, fmt.Errorf("cuda backend: queue depth %d", opts.QueueDepth)
	}
	if (opts.PinUploads || opts.PinDatasets) && typ != DeviceCUDA {
		return opts, fmt.Errorf("cuda backend: PinUploads and PinDatasets need the %s device", DeviceCUDA)
	}
	if opts.PrecomputeFactor < 0 {
		return opts, fmt.Errorf("cuda backend: precompute factor %d", opts.PrecomputeFactor)
	}
	return opts, nil
}

// openCUDA opens the CUDA driver and loads ICICLE's CUDA backend from
// opts.BackendDir (else its default folder). On error the driver is
// closed again.
func (b *Backend) openCUDA(opts Options) error {
	dir := opts.BackendDir
	if dir == "" {
		dir = backendDir()
	}
	// The driver first: how host threads wait for the devices is
	// set before any context exists, and loading ICICLE's backend
	// makes them.
	err := b.timed("cuda_driver_init", func() (err error) { b.drv, err = openDriver(); return err })
	if err != nil {
		return fmt.Errorf("cuda backend: %w", err)
	}
	if opts.Sync != "" {
		if err := b.drv.setSyncAll(opts.Sync); err != nil {
			b.drv.close()
			return fmt.Errorf("cuda backend: %w (PROVEBENCH_CUDA_SYNC=default leaves CUDA's own choice)", err)
		}
	}
	if err := b.timed("icicle_load_backend", func() error { return loadBackend(dir) }); err != nil {
		b.drv.close()
		return fmt.Errorf("cuda backend: %w", err)
	}
	return nil
}

// startDevices starts the devices ids of type typ, one after another,
// each timed as a setup stage; the caller closes the backend on error.
func (b *Backend) startDevices(typ string, ids []int, queueDepth int) error {
	for _, id := range ids {
		var d *device
		err := b.timed(fmt.Sprintf("device%d_start", id), func() (err error) {
			d, err = startDevice(typ, id, clock{drv: b.drv}, queueDepth)
			return err
		})
		if err != nil {
			return fmt.Errorf("cuda backend: %s device %d: %w", typ, id, err)
		}
		b.devs = append(b.devs, d)
	}
	return nil
}

// openPinner makes the page-locking pinner, on the first device's
// context; the caller closes the backend on error.
func (b *Backend) openPinner() error {
	var ctx cuContext
	err := b.devs[0].launch.do(func() (err error) { ctx, err = b.drv.currentContext(); return err })
	if err != nil {
		return fmt.Errorf("cuda backend: context for page-locking: %w", err)
	}
	b.pinner = &pinner{drv: b.drv, ctx: ctx}
	return nil
}

// HostPinner implements prover.HostPinner: with Options.PinDatasets, the
// pipeline synthesizes into memory this backend page-locked.
func (b *Backend) HostPinner() hostmem.Pinner {
	if b.pinner == nil || b.pool != nil {
		return nil
	}
	return b.pinner
}

// pinner page-locks host memory for every device (CU_MEMHOSTREGISTER_PORTABLE)
// on the calling thread, with the first device's context made current
// there: the synthesis workers lock their datasets in parallel, since
// locking a large dataset is slow and one thread locking for many workers
// holds their syntheses back (docs/gpu.md, docs/results/h200-2026-12-03).
type pinner struct {
	drv *driver
	ctx cuContext
}

func (p *pinner) Pin(mem []byte) error {
	return p.onThread(func() error { return p.drv.pin(unsafe.Pointer(&mem[0]), len(mem)) })
}

func (p *pinner) Unpin(mem []byte) error {
	return p.onThread(func() error { return p.drv.unpin(unsafe.Pointer(&mem[0])) })
}

// onThread runs fn locked to the calling thread with the context current.
func (p *pinner) onThread(fn func() error) error {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if err := p.drv.makeCurrent(p.ctx); err != nil {
		return err
	}
	return fn()
}

// deviceIDs resolves the device list against the devices ICICLE sees.
func deviceIDs(typ string, want []int) ([]int, error) {
	t, err := startThread(icicle.CreateDevice(typ, 0))
	if err != nil {
		if typ == DeviceCUDA {
			return nil, fmt.Errorf("no %s device: %w (the CUDA backend did not register, or no GPU is visible; see docs/gpu.md)", typ, err)
		}
		return nil, fmt.Errorf("no %s device: %w", typ, err)
	}
	var count int
	err = t.do(func() error {
		n, e := icicle.GetDeviceCount()
		count = n
		return check("device count", e)
	})
	t.close(nil)
	if err != nil {
		return nil, err
	}
	if want == nil {
		ids := make([]int, count)
		for i := range ids {
			ids[i] = i
		}
		return ids, nil
	}
	if len(want) == 0 {
		return nil, errors.New("empty device list")
	}
	for i, id := range want {
		if id < 0 || id >= count {
			return nil, fmt.Errorf("device %d: %s has devices 0..%d", id, typ, count-1)
		}
		if slices.Contains(want[:i], id) {
			return nil, fmt.Errorf("device %d listed twice", id)
		}
	}
	return slices.Clone(want), nil
}

// Name implements prover.Backend.
func (b *Backend) Name() string { return "cuda" }

// DeviceType is the ICICLE device type the backend runs on.
func (b *Backend) DeviceType() string { return b.deviceType }

// Devices implements prover.Backend.
func (b *Backend) Devices() int { return len(b.devs) }

// Load implements prover.Backend: it uploads the key's vectors to every device
// (in parallel) and initialises each device's NTT domain.
func (b *Backend) Load(ctx context.Context, pk *groth16.ProvingKey) error {
	if err := pk.CheckShape(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return errClosed
	case b.key != nil:
		return errors.New("cuda backend: a proving key is already loaded")
	}
	ki, err := newKeyInfo(pk)
	if err != nil {
		return err
	}
	errs := make([]error, len(b.devs))
	var wg sync.WaitGroup
	for i, d := range b.devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.launch.do(func() error { return d.loadKey(ctx, pk, &ki.cosetGen, b.precompute, b.timed) })
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, d := range b.devs {
			_ = d.launch.do(d.releaseKey)
		}
		return fmt.Errorf("cuda backend: load key: %w", err)
	}
	b.key = ki
	return nil
}

func newKeyInfo(pk *groth16.ProvingKey) (*keyInfo, error) {
	n := uint64(pk.Domain)
	w2n, err := fr.Generator(2 * n)
	if err != nil {
		return nil, fmt.Errorf("cuda backend: coset for domain %d: %w", n, err)
	}
	// The NTTs of size N use w_2N^2 as their root: it must be the root
	// gnark-crypto's domain (and so the key's Lagrange basis) uses.
	wn, err := fr.Generator(n)
	if err != nil {
		return nil, fmt.Errorf("cuda backend: domain %d: %w", n, err)
	}
	var sq fr.Element
	if sq.Square(&w2n); !sq.Equal(&wn) {
		return nil, errors.New("cuda backend: the 2N-th root of unity does not square to the domain's generator")
	}
	ki := &keyInfo{pk: pk, cosetGen: w2n}

	r := montgomeryR()
	var rInv fr.Element
	rInv.Inverse(&r)
	rInv.BigInt(&ki.wireScale)

	var z, one fr.Element
	one.SetOne()
	z.Exp(w2n, new(big.Int).SetUint64(n)).Sub(&z, &one)
	var s fr.Element
	s.Mul(&z, &r).Inverse(&s)
	s.BigInt(&ki.quotientScale)
	return ki, nil
}

// loadedKey returns the key, or why work cannot start.
func (b *Backend) loadedKey() (*keyInfo, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	switch {
	case b.closed:
		return nil, errClosed
	case b.key == nil:
		return nil, errors.New("cuda backend: Start before Load")
	}
	return b.key, nil
}

// Stats implements prover.Backend. MemoryBytes counts the device memory the
// backend allocated itself (the resident key, ICICLE's NTT domain as
// measured when it was built, each partition's buffers until their
// stream-ordered free is queued); ICICLE's MSM scratch space is not in it
// (NVML's per-process figure has everything). Busy is the union of the
// intervals in which the compute stream ran a partition's work (its NTT
// region, and its MSMs and download), timed with CUDA events (the host
// clock on ICICLE's synchronous CPU device), added when a partition
// completes; Span is the end of the last interval counted, on the same
// clock, so a busy fraction over a window is at most 100%. Queued counts partitions waiting for the device's launch
// thread.
func (b *Backend) Stats(dev int) prover.DeviceStats {
	if dev < 0 || dev >= len(b.devs) {
		return prover.DeviceStats{}
	}
	d := b.devs[dev]
	busy, covered := d.busy()
	return prover.DeviceStats{
		MemoryBytes: d.mem.Load(),
		Busy:        busy,
		Span:        covered,
		Queued:      int(d.queued.Load()),
	}
}

// Close implements prover.Backend: queued partitions run to completion, then
// the key, streams and NTT domain are released.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	var errs []error
	for _, d := range b.devs {
		if err := d.close(); err != nil {
			errs = append(errs, fmt.Errorf("cuda backend: close device %d: %w", d.id, err))
		}
	}
	if b.pool != nil {
		if err := b.pool.Close(); err != nil {
			errs = append(errs, fmt.Errorf("cuda backend: release the page-locked pool: %w", err))
		}
	}
	b.drv.close()
	return errors.Join(errs...)
}

// blinding draws a proof's (r, s).
func (b *Backend) blinding() (groth16.Blinding, error) {
	b.randMu.Lock()
	defer b.randMu.Unlock()
	return groth16.NewBlinding(b.rand)
}
