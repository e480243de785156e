//go:build cuda

package cuda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	icicle381 "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381"
	icicleg2 "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/g2"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/cpu"
	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/prover"
)

// The tests run on the device named by $PROVEBENCH_ICICLE_DEVICE; without
// it, on CUDA when $ICICLE_BACKEND_INSTALL_DIR is set, else on ICICLE's CPU
// device, which runs the same code path (slowly) on any host.
func testDeviceType() (typ string, explicit bool) {
	if t := os.Getenv("PROVEBENCH_ICICLE_DEVICE"); t != "" {
		return t, true
	}
	if backendDir() != "" {
		return DeviceCUDA, false
	}
	return DeviceCPU, false
}

func newTestBackend(t testing.TB, opts Options) *Backend {
	t.Helper()
	typ, explicit := testDeviceType()
	opts.DeviceType = typ
	b, err := New(opts)
	if err != nil {
		if typ == DeviceCUDA && !explicit {
			t.Skipf("ICICLE's CUDA device is not usable here (set PROVEBENCH_ICICLE_DEVICE=CPU to test on ICICLE's CPU device): %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return b
}

// setupKey is a real key at 2^10, shared by the tests.
var setupKey = sync.OnceValues(func() (*groth16.ProvingKey, *groth16.VerifyingKey) {
	pk, vk, err := groth16.Setup(circuit.Params{Constraints: 1 << 10}, nil)
	if err != nil {
		panic(err)
	}
	return pk, vk
})

func loadedBackend(t *testing.T, opts Options) (*Backend, *groth16.ProvingKey, *groth16.VerifyingKey) {
	t.Helper()
	pk, vk := setupKey()
	b := newTestBackend(t, opts)
	if err := b.Load(context.Background(), pk); err != nil {
		t.Fatal(err)
	}
	return b, pk, vk
}

// proveOne synthesizes a partition, proves it and frees a/b/c as soon as
// Start returns, as the pipeline's early free does.
func proveOne(t *testing.T, b prover.Backend, p circuit.Params, seed uint64) (prover.Result, []fr.Element) {
	t.Helper()
	ds, err := circuit.Synthesize(context.Background(), p, seed, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	pub, _ := ds.Public()
	pub = slices.Clone(pub)
	job, err := b.Start(context.Background(), 0, ds)
	if err != nil {
		t.Fatal(err)
	}
	ds.FreeABC()
	res, err := job.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return res, pub
}

// proveDataset proves a dataset and leaves it as it was.
func proveDataset(t *testing.T, b prover.Backend, ds *dataset.Dataset) (prover.Result, error) {
	t.Helper()
	job, err := b.Start(context.Background(), 0, ds)
	if err != nil {
		t.Fatal(err)
	}
	res, err := job.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return res, nil
}

func TestLayoutsMatchICICLE(t *testing.T) {
	sizes := []struct {
		name         string
		gnark, icicl uintptr
	}{
		{"scalar", unsafe.Sizeof(fr.Element{}), unsafe.Sizeof(icicle381.ScalarField{})},
		{"G1 affine", unsafe.Sizeof(bls12381.G1Affine{}), unsafe.Sizeof(icicle381.Affine{})},
		{"G2 affine", unsafe.Sizeof(bls12381.G2Affine{}), unsafe.Sizeof(icicleg2.G2Affine{})},
		{"G1 projective", g1ProjectiveBytes, unsafe.Sizeof(icicle381.Projective{})},
		{"G2 projective", g2ProjectiveBytes, unsafe.Sizeof(icicleg2.G2Projective{})},
	}
	for _, s := range sizes {
		if s.gnark != s.icicl {
			t.Errorf("%s: %d bytes here, %d in ICICLE", s.name, s.gnark, s.icicl)
		}
	}
}

func TestProveVerify(t *testing.T) {
	b, pk, vk := loadedBackend(t, Options{})
	res, pub := proveOne(t, b, pk.Params(), 42)
	if err := groth16.Verify(vk, pub, &res.Proof); err != nil {
		t.Fatalf("verify: %v (stages %v)", err, res.Stages)
	}
	pub[0].SetUint64(7)
	if err := groth16.Verify(vk, pub, &res.Proof); !errors.Is(err, groth16.ErrInvalidProof) {
		t.Fatalf("changed input: got %v", err)
	}
	want := []string{prover.StageQueueWait, prover.StageUpload, prover.StageNTT, prover.StageMSMA, prover.StageMSMB1,
		prover.StageMSMB2, prover.StageMSML, prover.StageMSMH, prover.StageDownload, prover.StageAssemble}
	var got []string
	for _, s := range res.Stages {
		got = append(got, s.Name)
		if s.Duration < 0 {
			t.Errorf("stage %s: negative duration %v", s.Name, s.Duration)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("stages %v, want %v", got, want)
	}
}

// TestMatchesCPUBackend: with the same blinding, proofs equal the CPU
// backend's byte for byte.
func TestMatchesCPUBackend(t *testing.T) {
	const seed = 7
	b, pk, _ := loadedBackend(t, Options{Rand: rand.NewChaCha8([32]byte{seed})})
	ref, err := cpu.New(cpu.Options{Rand: rand.NewChaCha8([32]byte{seed})})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if err := ref.Load(context.Background(), pk); err != nil {
		t.Fatal(err)
	}
	for _, witness := range []uint64{1, 2, 3} {
		got, _ := proveOne(t, b, pk.Params(), witness)
		want, _ := proveOne(t, ref, pk.Params(), witness)
		for _, c := range []struct {
			name      string
			got, want []byte
		}{
			{"Ar", got.Proof.Ar.Marshal(), want.Proof.Ar.Marshal()},
			{"Bs", got.Proof.Bs.Marshal(), want.Proof.Bs.Marshal()},
			{"Krs", got.Proof.Krs.Marshal(), want.Proof.Krs.Marshal()},
		} {
			if !bytes.Equal(c.got, c.want) {
				t.Errorf("witness %d: %s differs from the CPU backend's", witness, c.name)
			}
		}
	}
}

// TestMemoryAndBusy: several partitions in flight at once; afterwards the
// device holds the key again, nothing more, and the device time added up.
func TestMemoryAndBusy(t *testing.T) {
	b, pk, vk := loadedBackend(t, Options{})
	base := b.Stats(0).MemoryBytes
	if base < pk.Bytes() {
		t.Fatalf("after Load: %d device bytes, the key alone is %d", base, pk.Bytes())
	}
	ctx := context.Background()
	type started struct {
		job prover.Job
		pub []fr.Element
	}
	var jobs []started
	for i := range 3 {
		ds, err := circuit.Synthesize(ctx, pk.Params(), uint64(100+i), 0, i)
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := ds.Public()
		pub = slices.Clone(pub)
		job, err := b.Start(ctx, 0, ds)
		if err != nil {
			t.Fatal(err)
		}
		ds.Free() // the job no longer reads the dataset
		jobs = append(jobs, started{job, pub})
	}
	for i, s := range jobs {
		res, err := s.job.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(vk, s.pub, &res.Proof); err != nil {
			t.Errorf("partition %d: %v", i, err)
		}
	}
	st := b.Stats(0)
	if st.MemoryBytes != base {
		t.Errorf("after the jobs: %d device bytes, %d after Load", st.MemoryBytes, base)
	}
	if st.Busy <= 0 || st.Queued != 0 {
		t.Errorf("after the jobs: busy %v, queued %d", st.Busy, st.Queued)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if m := b.Stats(0).MemoryBytes; m != 0 {
		t.Errorf("after Close: %d device bytes", m)
	}
	if _, err := b.Start(ctx, 0, nil); !errors.Is(err, errClosed) {
		t.Errorf("Start after Close: %v", err)
	}
}

func TestStartCancelled(t *testing.T) {
	b, pk, _ := loadedBackend(t, Options{})
	base := b.Stats(0).MemoryBytes
	ds, err := circuit.Synthesize(context.Background(), pk.Params(), 5, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Start(ctx, 0, ds); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a cancelled context: %v", err)
	}
	if m := b.Stats(0).MemoryBytes; m != base {
		t.Errorf("after the cancelled Start: %d device bytes, %d after Load", m, base)
	}
}

// TestCancelQueuedJob cancels a partition while it waits for the device: its
// Wait reports the cancellation and its buffers are released.
func TestCancelQueuedJob(t *testing.T) {
	b, pk, _ := loadedBackend(t, Options{})
	base := b.Stats(0).MemoryBytes
	ds, err := circuit.Synthesize(context.Background(), pk.Params(), 6, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()

	// Hold the launch thread so the job stays queued.
	release := make(chan struct{})
	if err := b.devs[0].launch.submit(func() { <-release }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	job, err := b.Start(ctx, 0, ds)
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	if q := b.Stats(0).Queued; q != 1 {
		t.Errorf("queued %d, want 1", q)
	}
	if m := b.Stats(0).MemoryBytes; m <= base {
		t.Errorf("a queued partition holds no device memory (%d bytes, %d after Load)", m, base)
	}
	cancel()
	close(release)
	if _, err := job.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after cancel: %v", err)
	}
	if m := b.Stats(0).MemoryBytes; m != base {
		t.Errorf("after the cancelled job: %d device bytes, %d after Load", m, base)
	}
}

// TestQueueDepth: with the device's queue full, Start waits for room, and
// gives up when its context is cancelled.
func TestQueueDepth(t *testing.T) {
	b, pk, _ := loadedBackend(t, Options{QueueDepth: 1})
	ds, err := circuit.Synthesize(context.Background(), pk.Params(), 8, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	release := make(chan struct{})
	if err := b.devs[0].launch.submit(func() { <-release }); err != nil {
		t.Fatal(err)
	}
	first, err := b.Start(context.Background(), 0, ds)
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan error, 1)
	go func() {
		_, err := b.Start(ctx, 0, ds)
		started <- err
	}()
	select {
	case err := <-started:
		t.Errorf("Start with the queue full returned at once: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-started; !errors.Is(err, context.Canceled) {
		t.Errorf("Start cancelled while waiting for room: %v", err)
	}
	close(release)
	if _, err := first.Wait(); err != nil {
		t.Fatal(err)
	}
	if q := b.Stats(0).Queued; q != 0 {
		t.Errorf("queued %d after the jobs", q)
	}
}

func TestStartErrors(t *testing.T) {
	ctx := context.Background()
	b := newTestBackend(t, Options{})
	pk, _ := setupKey()
	ds, err := circuit.Synthesize(ctx, circuit.Params{Constraints: 1 << 9}, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	if _, err := b.Start(ctx, 0, ds); err == nil {
		t.Error("Start before Load: no error")
	}
	if err := b.Load(ctx, pk); err != nil {
		t.Fatal(err)
	}
	if err := b.Load(ctx, pk); err == nil {
		t.Error("second Load: no error")
	}
	if _, err := b.Start(ctx, b.Devices(), ds); err == nil {
		t.Error("Start on a device out of range: no error")
	}
	if _, err := b.Start(ctx, 0, ds); err == nil {
		t.Error("Start with a dataset of another size: no error")
	}
	ds.FreeABC()
	if _, err := b.Start(ctx, 0, ds); err == nil {
		t.Error("Start with a/b/c freed: no error")
	}
}

func TestNewErrors(t *testing.T) {
	for _, opts := range []Options{
		{DeviceType: "METAL"},
		{DeviceType: DeviceCPU, Devices: []int{1}},
		{DeviceType: DeviceCPU, Devices: []int{0, 0}},
		{DeviceType: DeviceCPU, Devices: []int{}},
		{DeviceType: DeviceCPU, PinUploads: true},
		{DeviceType: DeviceCPU, QueueDepth: -1},
	} {
		if b, err := New(opts); err == nil {
			b.Close()
			t.Errorf("New(%+v): no error", opts)
		}
	}
}

// TestOverlappedPartitions keeps partitions in flight the way a pipeline
// does (the next one uploads, page-locked, while the previous one's MSMs
// run) and checks that the proofs equal those proved one at a time, from
// pageable memory, with the same blinding.
// It runs on CUDA only: ICICLE's CPU device completes every call before
// returning, so nothing overlaps there. 2^20 is large enough for ICICLE's
// MSMs to take their large-bucket path, whose stream-ordering bug the
// memory pool settings work around (see reuseByDependencyOnly).
func TestOverlappedPartitions(t *testing.T) {
	if typ, _ := testDeviceType(); typ != DeviceCUDA {
		t.Skipf("nothing overlaps on ICICLE's %s device", typ)
	}
	ctx := context.Background()
	dir := os.Getenv("PROVEBENCH_CACHE")
	if dir == "" {
		dir = t.TempDir()
	}
	pk, _, err := groth16.Cache{Dir: dir}.Get(ctx, circuit.Params{Constraints: 1 << 20}, groth16.KindRandom)
	if err != nil {
		t.Fatal(err)
	}
	defer pk.Close()
	var datasets []*dataset.Dataset
	for i := range 3 {
		ds, err := circuit.Synthesize(ctx, pk.Params(), uint64(i), 0, i)
		if err != nil {
			t.Fatal(err)
		}
		defer ds.Free()
		datasets = append(datasets, ds)
	}
	const partitions, inFlight = 10, 2
	prove := func(overlap bool) []groth16.Proof {
		// The overlapped run also page-locks its uploads.
		b := newTestBackend(t, Options{Rand: rand.NewChaCha8([32]byte{1}), PinUploads: overlap})
		defer b.Close()
		if err := b.Load(ctx, pk); err != nil {
			t.Fatal(err)
		}
		var proofs []groth16.Proof
		if !overlap {
			for i := range partitions {
				res, _ := proveDataset(t, b, datasets[i%len(datasets)])
				proofs = append(proofs, res.Proof)
			}
			return proofs
		}
		jobs := make(chan prover.Job, inFlight)
		errc := make(chan error, 1)
		go func() {
			defer close(jobs)
			for i := range partitions {
				job, err := b.Start(ctx, 0, datasets[i%len(datasets)])
				if err != nil {
					errc <- err
					return
				}
				jobs <- job // blocks while inFlight jobs wait
			}
		}()
		for job := range jobs {
			res, err := job.Wait()
			if err != nil {
				t.Fatal(err)
			}
			proofs = append(proofs, res.Proof)
		}
		select {
		case err := <-errc:
			t.Fatal(err)
		default:
		}
		if m, base := b.Stats(0).MemoryBytes, b.devs[0].key.bytes+b.devs[0].key.domainBytes; m != base {
			t.Errorf("after the jobs: %d device bytes, %d resident", m, base)
		}
		return proofs
	}
	sequential, overlapped := prove(false), prove(true)
	if len(sequential) != partitions || len(overlapped) != partitions {
		t.Fatalf("%d and %d proofs, want %d", len(sequential), len(overlapped), partitions)
	}
	for i := range sequential {
		if sequential[i] != overlapped[i] {
			t.Errorf("partition %d: the overlapped proof differs from the sequential one", i)
		}
	}
}

// TestSplitMatchesCPUBackend: at the ends of the bit fraction's range, and
// with precomputed bases, the split MSMs give the CPU backend's proofs byte
// for byte, and they verify.
func TestSplitMatchesCPUBackend(t *testing.T) {
	for _, tc := range []struct {
		bits, precompute int
	}{{circuit.MinBitsPerMille, 1}, {circuit.MaxBitsPerMille, 1}, {circuit.DefaultBitsPerMille, 4}} {
		t.Run(fmt.Sprintf("bits=%d/precompute=%d", tc.bits, tc.precompute), func(t *testing.T) {
			p := circuit.Params{Constraints: 1 << 8, Rounds: 1, BitsPerMille: tc.bits}
			pk, vk, err := groth16.Setup(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			b := newTestBackend(t, Options{Rand: rand.NewChaCha8([32]byte{3}), PrecomputeFactor: tc.precompute})
			if err := b.Load(context.Background(), pk); err != nil {
				t.Fatal(err)
			}
			ref, err := cpu.New(cpu.Options{Rand: rand.NewChaCha8([32]byte{3})})
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			if err := ref.Load(context.Background(), pk); err != nil {
				t.Fatal(err)
			}
			got, pub := proveOne(t, b, p, 11)
			want, _ := proveOne(t, ref, p, 11)
			if err := groth16.Verify(vk, pub, &got.Proof); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if !bytes.Equal(got.Proof.Ar.Marshal(), want.Proof.Ar.Marshal()) ||
				!bytes.Equal(got.Proof.Bs.Marshal(), want.Proof.Bs.Marshal()) ||
				!bytes.Equal(got.Proof.Krs.Marshal(), want.Proof.Krs.Marshal()) {
				t.Error("proof differs from the CPU backend's")
			}
		})
	}
}

// TestPinnedDatasets: a dataset synthesized into memory the backend
// page-locked proves and verifies, and frees (unlocking first). CUDA only.
func TestPinnedDatasets(t *testing.T) {
	if typ, _ := testDeviceType(); typ != DeviceCUDA {
		t.Skip("page-locking needs the CUDA device")
	}
	b, pk, vk := loadedBackend(t, Options{PinDatasets: true})
	pin := b.HostPinner()
	if pin == nil {
		t.Fatal("PinDatasets set, but HostPinner is nil")
	}
	ds, err := circuit.SynthesizePinned(context.Background(), pk.Params(), 5, 0, 0, pin)
	if err != nil {
		t.Fatal(err)
	}
	if !ds.Pinned() {
		t.Fatal("dataset is not page-locked")
	}
	pub, _ := ds.Public()
	pub = slices.Clone(pub)
	res, err := proveDataset(t, b, ds)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(vk, pub, &res.Proof); err != nil {
		t.Fatalf("verify: %v", err)
	}
	if abc, wires := ds.Free(); abc == 0 || wires == 0 {
		t.Fatalf("Free released %d + %d bytes", abc, wires)
	}
}
