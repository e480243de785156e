//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	goruntime "runtime"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/core"
	icicle "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"

	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/hostmem"
	"github.com/provebench/provebench/gpu/prover"
)

// job is a partition from Start to Wait. Its device buffers belong to Start
// until it submits the job to the launch thread, then to the launch thread,
// which queues every free before handing the job to the completion thread.
type job struct {
	b   *Backend
	d   *device
	key *keyInfo
	ctx context.Context

	part    partition
	results *hostmem.Buffer // the downloaded sums
	// one is the one wire's value (1 in a satisfying assignment): B's
	// full-width term, which the host adds.
	one fr.Element
	// pinEach page-locks the dataset's vectors for the uploads alone
	// (Options.PinUploads on a dataset not synthesized page-locked).
	pinEach bool

	// Set by Start before wiresReady closes.
	wiresReady chan struct{}
	uploadErr  error
	uploaded   time.Duration

	// Set by Start, then by the launch thread.
	submitted time.Time
	queueWait time.Duration // for a queue slot, then for the launch thread
	start     stamp         // compute stream, before the NTT region
	nttEnd    stamp
	msmStart  stamp // after the wires arrived
	msmEnd    [5]stamp
	download  stamp // after the sums' download
	end       stamp // after the frees: nothing of the job is left after it

	// Set by the completion thread before done closes.
	sums   groth16.Sums
	stages []prover.Stage
	err    error
	done   chan struct{}
}

// Start implements prover.Backend: it copies a, b and c to the device and
// returns once they are there, with the NTT region queued; the wires are
// copied meanwhile, while the device runs the NTT region, and Start returns
// when they are there too. The job never reads the dataset after Start.
func (b *Backend) Start(ctx context.Context, dev int, ds *dataset.Dataset) (prover.Job, error) {
	key, err := b.loadedKey()
	if err != nil {
		return nil, err
	}
	in, err := b.startInput(ctx, key.pk, dev, ds)
	if err != nil {
		return nil, err
	}
	d := b.devs[dev]
	slotWait, err := d.waitForSlot(ctx)
	if err != nil {
		return nil, err
	}
	handedOff := false
	defer func() {
		if !handedOff {
			<-d.slots
		}
	}()
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if err := d.selectDevice(); err != nil {
		return nil, fmt.Errorf("cuda backend: %w", err)
	}
	stream, e := icicle.CreateStream()
	if err := check("create upload stream", e); err != nil {
		return nil, fmt.Errorf("cuda backend: %w", err)
	}
	// When the stream is destroyed it is idle, or has only frees queued,
	// which CUDA still runs.
	defer icicle.DestroyStream(stream)

	j := &job{
		b: b, d: d, key: key, ctx: ctx,
		queueWait:  slotWait,
		part:       partition{n: ds.N, numPublic: ds.NumPublic, full: key.pk.Params().BitWires()},
		one:        in.wires[0],
		pinEach:    b.pinUploads && !ds.Pinned(),
		wiresReady: make(chan struct{}),
		done:       make(chan struct{}),
	}
	if err := j.submitABC(stream, in); err != nil {
		return nil, err
	}
	handedOff = true // the launch thread frees the slot when it takes the job
	if err := j.uploadWires(stream, in.wires); err != nil {
		return nil, err
	}
	return j, nil
}

// startInput is the dataset's vectors Start uploads.
type startInput struct {
	a, b, c, wires []fr.Element
}

// startInput checks that ds fits the key pk and device dev exists, and
// returns ds's vectors.
func (b *Backend) startInput(ctx context.Context, pk *groth16.ProvingKey, dev int, ds *dataset.Dataset) (*startInput, error) {
	switch {
	case dev < 0 || dev >= len(b.devs):
		return nil, fmt.Errorf("cuda backend: device %d of %d", dev, len(b.devs))
	case ds.N != pk.Domain:
		return nil, fmt.Errorf("cuda backend: dataset of %d constraints, key for %d", ds.N, pk.Domain)
	case ds.NumPublic != pk.NumPublic:
		return nil, fmt.Errorf("cuda backend: dataset has %d public inputs, key %d", ds.NumPublic, pk.NumPublic)
	}
	in := &startInput{}
	var err error
	if in.a, in.b, in.c, err = ds.ABC(); err != nil {
		return nil, fmt.Errorf("cuda backend: start: %w", err)
	}
	if in.wires, err = ds.Wires(); err != nil {
		return nil, fmt.Errorf("cuda backend: start: %w", err)
	}
	if len(in.wires) != pk.NumWires {
		return nil, fmt.Errorf("cuda backend: dataset has %d wires, key %d", len(in.wires), pk.NumWires)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cuda backend: start: %w", err)
	}
	return in, nil
}

// waitForSlot takes one of the device's slots for a job, waiting while
// they are all taken, and says how long it waited.
func (d *device) waitForSlot(ctx context.Context) (time.Duration, error) {
	queued := time.Now()
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return 0, fmt.Errorf("cuda backend: waiting for device %d: %w", d.id, ctx.Err())
	}
	return time.Since(queued), nil
}

// submitABC allocates the job's buffers, uploads a, b and c and hands the
// job to the launch thread, which queues the NTT region. On error the
// buffers are freed and the job was not handed over.
func (j *job) submitABC(stream icicle.Stream, in *startInput) error {
	p := &j.part
	if err := j.allocate(stream); err != nil {
		err = errors.Join(err, j.freeAll(stream))
		return fmt.Errorf("cuda backend: %w", err)
	}
	abc, err := j.upload(stream, transfer{"a", in.a, p.a}, transfer{"b", in.b, p.b}, transfer{"c", in.c, p.c})
	if err != nil {
		err = errors.Join(err, j.freeAll(stream))
		return fmt.Errorf("cuda backend: upload: %w", err)
	}
	j.uploaded = abc.host
	if err := j.d.submit(j); err != nil {
		return errors.Join(err, j.freeAll(stream))
	}
	return nil
}

// uploadWires uploads the wires of a submitted job while the device runs
// its NTT region. The launch thread owns the buffers now; it waits for
// wiresReady before it touches the wires or frees anything. On error it
// returns once the job's device work is over and its buffers released.
func (j *job) uploadWires(stream icicle.Stream, wires []fr.Element) error {
	up, err := j.upload(stream, transfer{"wires", wires, j.part.wires})
	if err != nil {
		err = fmt.Errorf("cuda backend: upload: %w", err)
	}
	j.uploaded += up.host
	j.uploadErr = err
	close(j.wiresReady)
	if err != nil {
		<-j.done // the job's device work is over and its buffers released
		return err
	}
	return nil
}

// allocate allocates the partition's device buffers and the host buffer
// the sums are downloaded into.
func (j *job) allocate(stream icicle.Stream) error {
	d, p := j.d, &j.part
	var err error
	if j.results, err = hostmem.Alloc(numG1Sums*g1ProjectiveBytes + g2ProjectiveBytes); err != nil {
		return err
	}
	for _, v := range []struct {
		dst     *core.DeviceSlice
		elem, n int
	}{
		{&p.a, fr.Bytes, p.n}, {&p.b, fr.Bytes, p.n}, {&p.c, fr.Bytes, p.n},
		{&p.wires, fr.Bytes, j.key.pk.NumWires},
		{&p.g1Sums, g1ProjectiveBytes, numG1Sums}, {&p.g2Sum, g2ProjectiveBytes, 1},
	} {
		if err := d.alloc(v.dst, v.elem, v.n, stream); err != nil {
			return err
		}
	}
	return nil
}

// transfer is one host vector to copy into a device buffer.
type transfer struct {
	name string
	src  []fr.Element
	dst  core.DeviceSlice
}

// uploadTimes are an upload's host time (what Start spends, page-locking
// included) and the copies' device time.
type uploadTimes struct{ host, copies time.Duration }

// upload copies host vectors to the device on stream and returns once the
// copies are complete, so that the host vectors may be freed. With
// j.pinEach the host vectors are page-locked for the duration. On error the
// stream is idle when upload returns.
func (j *job) upload(stream icicle.Stream, transfers ...transfer) (_ uploadTimes, err error) {
	start := time.Now()
	c := j.d.clock
	if j.pinEach {
		var pinned []unsafe.Pointer
		defer func() {
			for _, p := range pinned {
				err = errors.Join(err, c.drv.unpin(p))
			}
		}()
		for _, t := range transfers {
			p := unsafe.Pointer(&t.src[0])
			if err := c.drv.pin(p, len(t.src)*fr.Bytes); err != nil {
				return uploadTimes{}, fmt.Errorf("%s: %w", t.name, err)
			}
			pinned = append(pinned, p)
		}
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, check("synchronise upload", icicle.SynchronizeStream(stream)))
		}
	}()
	t0, err := c.record(stream)
	if err != nil {
		return uploadTimes{}, err
	}
	defer c.release(t0)
	for _, t := range transfers {
		if err := j.ctx.Err(); err != nil {
			return uploadTimes{}, err
		}
		if err := copyToDevice(t.dst, t.src, stream); err != nil {
			return uploadTimes{}, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	t1, err := c.record(stream)
	if err != nil {
		return uploadTimes{}, err
	}
	defer c.release(t1)
	if err := c.wait(t1); err != nil {
		return uploadTimes{}, err
	}
	copies, err := c.between(t0, t1)
	if err != nil {
		return uploadTimes{}, err
	}
	return uploadTimes{host: time.Since(start), copies: copies}, nil
}

// copyToDevice queues a host-to-device copy of src into dst.
func copyToDevice[T any](dst core.DeviceSlice, src []T, stream icicle.Stream) error {
	n := len(src) * int(unsafe.Sizeof(src[0]))
	if n > dst.Cap() {
		return fmt.Errorf("copy of %d bytes into a %d-byte device buffer", n, dst.Cap())
	}
	return check("copy to device", icicle.CopyToDeviceAsync(dst.AsUnsafePointer(), unsafe.Pointer(&src[0]), uint(n), stream))
}

// freeAll queues the release of every device buffer the job still holds and
// unmaps the host result buffer.
func (j *job) freeAll(stream icicle.Stream) error {
	err := j.freeDeviceBuffers(stream)
	if j.results != nil {
		_, ferr := j.results.Free()
		err = errors.Join(err, ferr)
	}
	return err
}

// submit hands a job whose a, b and c are on the device to the launch
// thread.
func (d *device) submit(j *job) error {
	j.submitted = time.Now()
	d.queued.Add(1)
	err := d.launch.submit(func() {
		d.queued.Add(-1)
		<-d.slots
		j.queueWait += time.Since(j.submitted)
		err := d.launchJob(j)
		if cerr := d.complete.submit(func() { d.finish(j, err) }); cerr != nil {
			// Unreachable: the completion thread closes after the
			// launch thread has drained.
			d.finish(j, errors.Join(err, cerr))
		}
	})
	if err != nil {
		d.queued.Add(-1)
		return fmt.Errorf("cuda backend: device %d: %w", d.id, err)
	}
	return nil
}

// launchJob runs on the launch thread: it queues the partition's NTT region,
// MSMs and download on the compute stream, and the release of every buffer
// right after its last use.
func (d *device) launchJob(j *job) (err error) {
	s, p := d.stream, &j.part
	defer func() {
		// Start may still be copying into the wires: wait before freeing.
		<-j.wiresReady
		err = errors.Join(err, j.freeDeviceBuffers(s))
		var serr error
		j.end, serr = d.clock.record(s)
		err = errors.Join(err, serr)
	}()
	if j.start, err = d.clock.record(s); err != nil {
		return err
	}
	if err := j.ctx.Err(); err != nil {
		return fmt.Errorf("cuda backend: NTT region: %w", err)
	}
	for _, k := range quotientKernels(p, &j.key.cosetGen, s, d.vecExtHandle()) {
		if err := check(k.name, k.run()); err != nil {
			return fmt.Errorf("cuda backend: NTT region: %w", err)
		}
	}
	if j.nttEnd, err = d.clock.record(s); err != nil {
		return err
	}
	if err := errors.Join(d.free(&p.b, s), d.free(&p.c, s)); err != nil {
		return err
	}

	<-j.wiresReady
	if j.uploadErr != nil {
		return j.uploadErr
	}
	if j.msmStart, err = d.clock.record(s); err != nil {
		return err
	}
	for i, k := range msmKernels(p, &d.key, s, d.vecExtHandle()) {
		if err := j.ctx.Err(); err != nil {
			return fmt.Errorf("cuda backend: %s: %w", k.name, err)
		}
		if err := check(k.name, k.run()); err != nil {
			return fmt.Errorf("cuda backend: %w", err)
		}
		if j.msmEnd[i], err = d.clock.record(s); err != nil {
			return err
		}
		switch k.name {
		case prover.StageMSML:
			err = d.free(&p.wires, s)
		case prover.StageMSMH:
			err = d.free(&p.a, s)
		}
		if err != nil {
			return err
		}
	}
	// The host buffer is pageable: these copies return once done, which
	// is when the MSMs are; the launch thread then moves on to the next
	// partition while nothing of this one is left on the stream.
	host := j.results.Bytes()
	if err := check("download sums", icicle.CopyFromDeviceAsync(unsafe.Pointer(&host[0]), p.g1Sums.AsUnsafePointer(), uint(p.g1Sums.Cap()), s)); err != nil {
		return err
	}
	if err := check("download sums", icicle.CopyFromDeviceAsync(unsafe.Pointer(&host[p.g1Sums.Cap()]), p.g2Sum.AsUnsafePointer(), uint(p.g2Sum.Cap()), s)); err != nil {
		return err
	}
	j.download, err = d.clock.record(s)
	return err
}

// freeDeviceBuffers queues the release of the job's device buffers.
func (j *job) freeDeviceBuffers(s icicle.Stream) error {
	p := &j.part
	var errs []error
	for _, v := range []*core.DeviceSlice{&p.a, &p.b, &p.c, &p.wires, &p.g1Sums, &p.g2Sum} {
		errs = append(errs, j.d.free(v, s))
	}
	return errors.Join(errs...)
}

// finish runs on the completion thread: it waits for the job's device work,
// reads its timings and sums, and releases its events and host buffer.
func (d *device) finish(j *job, err error) {
	c := d.clock
	if j.end != (stamp{}) {
		err = errors.Join(err, c.wait(j.end))
	}
	if err == nil {
		err = j.collect()
	} else if j.start != (stamp{}) && j.end != (stamp{}) {
		// The device worked on the failed partition all the same.
		_ = d.addBusy(j.start, j.end)
	}
	c.release(j.start, j.nttEnd, j.msmStart, j.download, j.end)
	c.release(j.msmEnd[:]...)
	if j.results != nil {
		_, ferr := j.results.Free()
		err = errors.Join(err, ferr)
	}
	j.err = err
	close(j.done)
}

// collect reads the stage timings and the sums of a completed job.
func (j *job) collect() error {
	c := j.d.clock
	span := func(from, to stamp) time.Duration {
		t, err := c.between(from, to)
		if err != nil {
			return -1
		}
		return t
	}
	j.stages = []prover.Stage{
		{Name: prover.StageQueueWait, Duration: j.queueWait},
		{Name: prover.StageUpload, Duration: j.uploaded},
		{Name: prover.StageNTT, Duration: span(j.start, j.nttEnd)},
	}
	prev := j.msmStart
	for i, k := range []string{prover.StageMSMA, prover.StageMSMB1, prover.StageMSMB2, prover.StageMSML, prover.StageMSMH} {
		j.stages = append(j.stages, prover.Stage{Name: k, Duration: span(prev, j.msmEnd[i])})
		prev = j.msmEnd[i]
	}
	j.stages = append(j.stages, prover.Stage{Name: prover.StageDownload, Duration: span(prev, j.download)})
	for _, st := range j.stages[2:] {
		if st.Duration < 0 {
			return fmt.Errorf("cuda backend: could not time stage %s", st.Name)
		}
	}
	// The device's busy intervals: the NTT region, then the MSMs and the
	// download (between them the launch thread may wait for the wires).
	if err := errors.Join(j.d.addBusy(j.start, j.nttEnd), j.d.addBusy(j.msmStart, j.download)); err != nil {
		return fmt.Errorf("cuda backend: busy time: %w", err)
	}

	var g1 [numG1Sums]bls12381.G1Jac
	host := j.results.Bytes()
	for i := range g1 {
		p, err := g1FromProjective(host[i*g1ProjectiveBytes : (i+1)*g1ProjectiveBytes])
		if err != nil {
			return fmt.Errorf("cuda backend: sum %d: %w", i, err)
		}
		g1[i] = p
	}
	b2, err := g2FromProjective(host[numG1Sums*g1ProjectiveBytes:])
	if err != nil {
		return fmt.Errorf("cuda backend: B2 sum: %w", err)
	}
	// Remove the constants the device left in the full-width sums (see
	// keyInfo), add the bit sums, and B's one-wire term.
	ws, qs := &j.key.wireScale, &j.key.quotientScale
	s, pk := &j.sums, j.key.pk
	s.A.ScalarMultiplication(&g1[sumAFull], ws).AddAssign(&g1[sumABits])
	s.L.ScalarMultiplication(&g1[sumLFull], ws).AddAssign(&g1[sumLBits])
	s.H.ScalarMultiplication(&g1[sumH], qs)
	one := j.one.BigInt(new(big.Int))
	s.B1.FromAffine(&pk.B1[0])
	s.B1.ScalarMultiplication(&s.B1, one).AddAssign(&g1[sumB1Bits])
	s.B2.FromAffine(&pk.B2[0])
	s.B2.ScalarMultiplication(&s.B2, one).AddAssign(&b2)
	return nil
}

// Wait implements prover.Job.
func (j *job) Wait() (prover.Result, error) {
	<-j.done
	if j.err != nil {
		return prover.Result{}, j.err
	}
	t := time.Now()
	bl, err := j.b.blinding()
	if err != nil {
		return prover.Result{}, err
	}
	p := groth16.Assemble(j.key.pk, &j.sums, bl)
	stages := append(j.stages[:len(j.stages):len(j.stages)], prover.Stage{Name: prover.StageAssemble, Duration: time.Since(t)})
	return prover.Result{Proof: p, Stages: stages}, nil
}
