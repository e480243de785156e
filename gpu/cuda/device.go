//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/core"
	icicle381 "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381"
	icicleg2 "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/g2"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/msm"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/ntt"
	icicle "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime/config_extension"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/shape"
)

// device is one ICICLE device: its threads, its compute stream and its copy
// of the proving key.
type device struct {
	id    int // ICICLE device id
	icl   icicle.Device
	clock clock

	// launch issues every partition's NTT region and MSMs on stream, in
	// submission order; complete waits for each partition's device work to
	// finish, in the same order, and releases what it held. Both have the
	// device selected.
	launch, complete *thread
	stream           icicle.Stream
	// slots bounds the partitions queued for the launch thread, counting
	// those still uploading (Options.QueueDepth).
	slots chan struct{}

	key residentKey // written by Load on the launch thread

	// vecExt configures vector operations on ICICLE's CPU device (nil on
	// CUDA).
	vecExt *config_extension.ConfigExtension

	mem    atomic.Int64 // device bytes the backend holds
	queued atomic.Int64

	// epoch is a stamp on the compute stream taken when the device
	// started: every partition's device intervals are placed on one time
	// axis from it, so Busy is their union even if two of them overlap.
	// Written once by startDevice, then read by the completion thread.
	epoch stamp
	// busyTotal is the union of the busy intervals of completed
	// partitions, covered the end of the last one (an offset from epoch).
	// The completion thread writes them; busyMu makes a read see both of
	// one update.
	busyMu             sync.Mutex
	busyTotal, covered time.Duration
}

// residentKey is the proving key on a device, in canonical (not Montgomery)
// form, as the MSMs read it.
type residentKey struct {
	a, b1, l, h, b2 core.DeviceSlice
	// aFull, lFull and hFull are the bases of the full-width MSMs (A and L
	// over the full-width wires, H): views of a, l and h, or with a
	// precompute factor above 1 their precomputed multiples, allocated on
	// their own (and listed in precomputed).
	aFull, lFull, hFull core.DeviceSlice
	precompute          int32
	precomputed         []core.DeviceSlice
	bytes               int64 // the vectors
	domain              bool  // ICICLE's NTT domain is initialised
	domainBytes         int64 // its size, as measured
}

func startDevice(typ string, id int, c clock, queueDepth int) (*device, error) {
	d := &device{id: id, icl: icicle.CreateDevice(typ, id), clock: c,
		slots: make(chan struct{}, queueDepth)}
	if typ == DeviceCPU {
		d.vecExt = cpuVecExt()
	}
	var err error
	if d.launch, err = startThread(d.icl); err != nil {
		return nil, err
	}
	if d.complete, err = startThread(d.icl); err != nil {
		d.launch.close(nil)
		return nil, err
	}
	err = d.launch.do(func() error {
		if c.drv != nil {
			if err := c.drv.requireContext(); err != nil {
				return err
			}
			if err := c.drv.reuseByDependencyOnly(id); err != nil {
				return err
			}
		}
		s, e := icicle.CreateStream()
		if err := check("create stream", e); err != nil {
			return err
		}
		d.stream = s
		if err := selfTest(s); err != nil {
			return err
		}
		epoch, err := c.record(s)
		d.epoch = epoch
		return err
	})
	if err != nil {
		_ = d.close()
		return nil, err
	}
	return d, nil
}

// selfTest runs a one-point MSM in G1 and in G2 and checks the results: it
// catches a curve backend that did not load (ICICLE then reports the MSM as
// not supported on the device) and a mismatch between the layouts assumed
// here and ICICLE's.
func selfTest(stream icicle.Stream) error {
	_, _, g1, g2 := bls12381.Generators()
	var two fr.Element
	two.SetUint64(2)
	scalars := core.HostSliceFromElements([]fr.Element{two})
	cfg := msm.GetDefaultMSMConfig()
	cfg.StreamHandle = stream
	cfg.AreScalarsMontgomeryForm = true
	cfg.AreBasesMontgomeryForm = true

	var r1 [1][g1ProjectiveBytes]byte
	if err := check("self-test G1 MSM", msm.Msm(scalars, core.HostSliceFromElements([]bls12381.G1Affine{g1}), &cfg, core.HostSliceFromElements(r1[:]))); err != nil {
		return fmt.Errorf("%w (is the curve backend library loaded? see docs/gpu.md)", err)
	}
	var r2 [1][g2ProjectiveBytes]byte
	if err := check("self-test G2 MSM", icicleg2.G2Msm(scalars, core.HostSliceFromElements([]bls12381.G2Affine{g2}), &cfg, core.HostSliceFromElements(r2[:]))); err != nil {
		return fmt.Errorf("%w (is the curve backend library built with G2?)", err)
	}
	j1, err := g1FromProjective(r1[0][:])
	if err != nil {
		return err
	}
	j2, err := g2FromProjective(r2[0][:])
	if err != nil {
		return err
	}
	var want1 bls12381.G1Jac
	want1.FromAffine(&g1)
	want1.Double(&want1)
	var want2 bls12381.G2Jac
	want2.FromAffine(&g2)
	want2.Double(&want2)
	if !j1.Equal(&want1) || !j2.Equal(&want2) {
		return errors.New("self-test: ICICLE's MSM of 2*G differs from gnark-crypto's")
	}
	return nil
}

// vecExtHandle is the handle vector operation configurations take.
func (d *device) vecExtHandle() config_extension.ConfigExtensionHandler {
	if d.vecExt == nil {
		return nil
	}
	return d.vecExt.AsUnsafePointer()
}

// busy is the device time spent on completed partitions, and the device
// time it covers (the end of the last of them).
func (d *device) busy() (busy, covered time.Duration) {
	d.busyMu.Lock()
	defer d.busyMu.Unlock()
	return d.busyTotal, d.covered
}

// addBusy adds a completed partition's device interval [from, to] to the
// busy time, less any part already counted. It runs on the completion
// thread, which sees the partitions in stream order.
func (d *device) addBusy(from, to stamp) error {
	a, err := d.clock.between(d.epoch, from)
	if err != nil {
		return err
	}
	b, err := d.clock.between(d.epoch, to)
	if err != nil {
		return err
	}
	d.busyMu.Lock()
	defer d.busyMu.Unlock()
	if b <= d.covered {
		return nil
	}
	d.busyTotal += b - max(a, d.covered)
	d.covered = b
	return nil
}

// selectDevice selects d on the calling goroutine's thread, which must be
// locked to it.
func (d *device) selectDevice() error {
	return check(fmt.Sprintf("set device %d", d.id), icicle.SetDevice(&d.icl))
}

// loadKey runs on the launch thread: it builds the NTT domain and uploads
// the key's vectors.
func (d *device) loadKey(ctx context.Context, pk *groth16.ProvingKey, root *fr.Element, precompute int, timed func(string, func() error) error) error {
	name := func(step string) string { return fmt.Sprintf("device%d_%s", d.id, step) }
	before, memErr := freeMemory()
	err := timed(name("ntt_domain"), func() error {
		return check("init NTT domain", ntt.InitDomain(scalarField(root), core.GetDefaultNTTInitDomainConfig()))
	})
	if err != nil {
		return err
	}
	d.key.domain = true
	if after, err := freeMemory(); memErr == nil && err == nil && after < before {
		d.key.domainBytes = int64(before - after)
		d.mem.Add(d.key.domainBytes)
	}
	if err := timed(name("key_upload"), func() error { return d.uploadKey(ctx, pk) }); err != nil {
		return err
	}
	if err := timed(name("precompute"), func() error { return d.fullBases(ctx, pk, precompute) }); err != nil {
		return err
	}
	// Load returns with the key ready: without this the precomputation of
	// the bases may still run on the device when the first partition
	// arrives, and its uploads wait for it, holding up the first Start in
	// every strategy (docs/gpu.md has the measurement).
	return timed(name("sync"), func() error {
		return check("synchronize the device after loading the key", icicle.DeviceSynchronize())
	})
}

// uploadKey copies the key's vectors to the device and converts them out
// of Montgomery form there.
func (d *device) uploadKey(ctx context.Context, pk *groth16.ProvingKey) error {
	g1s := []struct {
		dst  *core.DeviceSlice
		host []bls12381.G1Affine
	}{{&d.key.a, pk.A}, {&d.key.b1, pk.B1}, {&d.key.l, pk.L}, {&d.key.h, pk.H}}
	for _, v := range g1s {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := uploadKeyVector(d, v.dst, v.host); err != nil {
			return err
		}
		// Converted once here, so that no MSM allocates a converted copy.
		if err := check("key to canonical form", icicle381.AffineFromMontgomery(*v.dst)); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := uploadKeyVector(d, &d.key.b2, pk.B2); err != nil {
		return err
	}
	return check("key to canonical form", icicleg2.G2AffineFromMontgomery(d.key.b2))
}

// fullBases sets the bases of the full-width MSMs: views of the key, or
// with precompute > 1 ICICLE's precomputed multiples of them (precompute
// points per base), which trade device memory for fewer additions. The
// factor is lowered where the device lacks the memory
// (shape.PrecomputeFactor).
func (d *device) fullBases(ctx context.Context, pk *groth16.ProvingKey, precompute int) error {
	k := &d.key
	full := pk.Params().BitWires()
	privFull := full - (1 + pk.NumPublic)
	k.aFull, k.lFull, k.hFull = k.a.RangeTo(full, false), k.l.RangeTo(privFull, false), k.h
	k.precompute = 1
	if free, err := freeMemory(); err == nil {
		// The simulator prices the same choice (predict's GPUMemoryLaw).
		precompute = shape.PrecomputeFactor(pk.Params(), precompute, uint64(free))
	}
	if precompute <= 1 {
		return nil
	}
	for _, v := range []*core.DeviceSlice{&k.aFull, &k.lFull, &k.hFull} {
		if err := ctx.Err(); err != nil {
			return err
		}
		var out core.DeviceSlice
		n := v.Len() * precompute
		if _, e := out.Malloc(g1AffineBytes, n); e != icicle.Success {
			return check(fmt.Sprintf("allocate %d bytes for precomputed bases", g1AffineBytes*n), e)
		}
		d.mem.Add(int64(g1AffineBytes * n))
		k.bytes += int64(g1AffineBytes * n)
		k.precomputed = append(k.precomputed, out)
		cfg := msm.GetDefaultMSMConfig()
		cfg.PrecomputeFactor = int32(precompute)
		if err := check("precompute bases", msm.PrecomputeBases(*v, &cfg, out)); err != nil {
			return err
		}
		*v = out
	}
	k.precompute = int32(precompute)
	return nil
}

// precomputeFactor is the precompute factor the key was loaded with.
func (d *device) precomputeFactor() int { return int(d.key.precompute) }

// freeMemory is the device's free memory (not available on the CPU device).
func freeMemory() (uint, error) {
	m, e := icicle.GetAvailableMemory()
	if err := check("available memory", e); err != nil {
		return 0, err
	}
	return m.Free, nil
}

// uploadKeyVector copies a key vector to the device, synchronously (Load
// runs before any partition, so it may use the default stream).
func uploadKeyVector[T any](d *device, dst *core.DeviceSlice, host []T) error {
	elem := int(unsafe.Sizeof(host[0]))
	if _, e := dst.Malloc(elem, len(host)); e != icicle.Success {
		*dst = core.DeviceSlice{}
		return check(fmt.Sprintf("allocate %d bytes for the key", elem*len(host)), e)
	}
	n := int64(elem * len(host))
	d.mem.Add(n)
	d.key.bytes += n
	_, e := icicle.CopyToDevice(dst.AsUnsafePointer(), unsafe.Pointer(&host[0]), uint(n))
	return check("upload key", e)
}

// releaseKey frees the key and the NTT domain; it runs on a device thread.
func (d *device) releaseKey() error {
	var errs []error
	vecs := []*core.DeviceSlice{&d.key.a, &d.key.b1, &d.key.l, &d.key.h, &d.key.b2}
	for i := range d.key.precomputed {
		vecs = append(vecs, &d.key.precomputed[i])
	}
	for _, v := range vecs {
		if v.AsUnsafePointer() == nil {
			continue
		}
		errs = append(errs, check("free key", icicle.Free(v.AsUnsafePointer())))
		*v = core.DeviceSlice{}
	}
	d.mem.Add(-d.key.bytes)
	if d.key.domain {
		errs = append(errs, check("release NTT domain", ntt.ReleaseDomain()))
	}
	d.mem.Add(-d.key.domainBytes)
	d.key = residentKey{}
	return errors.Join(errs...)
}

// alloc allocates a device vector of n elements of size elem, queued on
// stream, and counts it.
func (d *device) alloc(dst *core.DeviceSlice, elem, n int, stream icicle.Stream) error {
	if _, e := dst.MallocAsync(elem, n, stream); e != icicle.Success {
		*dst = core.DeviceSlice{}
		return check(fmt.Sprintf("allocate %d bytes", elem*n), e)
	}
	d.mem.Add(int64(elem * n))
	return nil
}

// free queues the release of a device vector on stream (a no-op for one
// already freed) and stops counting it.
func (d *device) free(v *core.DeviceSlice, stream icicle.Stream) error {
	if v.AsUnsafePointer() == nil {
		return nil
	}
	err := check("free", icicle.FreeAsync(v.AsUnsafePointer(), stream))
	d.mem.Add(-int64(v.Cap()))
	*v = core.DeviceSlice{}
	return err
}

// close drains the device's threads, then releases the key, the stream and
// the domain on the completion thread.
func (d *device) close() error {
	d.launch.close(nil)
	var err error
	d.complete.close(func() {
		d.clock.release(d.epoch)
		err = d.releaseKey()
		if d.stream != nil {
			err = errors.Join(err, check("destroy stream", icicle.DestroyStream(d.stream)))
			d.stream = nil
		}
	})
	if d.vecExt != nil {
		config_extension.Delete(d.vecExt)
		d.vecExt = nil
	}
	return err
}
