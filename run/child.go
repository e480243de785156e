package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/backends"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/sample"
)

// ChildMain runs one repetition inside a child process: it reads the job
// from in, loads the key (already in the cache: the parent made sure), runs
// the pipeline and streams samples and the result to stream. It returns an
// error only for failures the parent should see on stderr as well.
func ChildMain(ctx context.Context, in io.Reader, stream io.Writer) error {
	out := &msgWriter{enc: json.NewEncoder(stream)}
	err := runChild(ctx, in, out)
	if err != nil {
		out.send(childMsg{Kind: msgError, Error: err.Error()})
	}
	return err
}

// msgWriter serialises messages from the sampler and the main goroutine.
type msgWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
	err error
}

func (w *msgWriter) send(m childMsg) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.enc.Encode(m)
	}
}

func runChild(ctx context.Context, in io.Reader, out *msgWriter) error {
	dec := json.NewDecoder(in)
	var job childJob
	if err := dec.Decode(&job); err != nil {
		return fmt.Errorf("child: read job: %w", err)
	}
	if job.ParentPID != 0 && os.Getppid() != job.ParentPID {
		return fmt.Errorf("child: the parent that started this repetition (pid %d) is gone; not running unsupervised", job.ParentPID)
	}
	spec := job.Spec

	// Proofs are verified after the run, outside the measured time: a
	// pairing check per partition is not part of what the pipeline costs.
	var proofs proofLog
	var opts pipeline.Options
	if spec.Verify {
		opts.Verify = proofs.add
	}
	pr, err := prepareProver(ctx, &spec, job.CacheDir, opts)
	if err != nil {
		return fmt.Errorf("child: %w", err)
	}
	defer pr.Close()
	energy := openEnergyMeter(pr.be)
	defer energy.close()

	req := childRequest{Repetition: job.Repetition, Warmup: job.Warmup, HeapProfile: job.HeapProfile}
	for served := 1; ; served++ {
		if err := serveRepetition(ctx, pr, &spec, req, served, job.Serve, &proofs, energy, out); err != nil {
			return err
		}
		if !job.Serve {
			return nil
		}
		// A serving child waits for the next request; its parent closing
		// the pipe is the end of the work.
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("child: read request: %w", err)
		}
		pr.engine = pr.engine.Next()
		proofs.reset()
	}
}

// serveRepetition runs one repetition on a prepared prover and streams its
// samples and result. served numbers the repetitions this process has run
// (1 for the first); a serving child (serve) resets its kernel peak first,
// so that the peak it reports is the repetition's own.
func serveRepetition(ctx context.Context, pr *preparedProver, spec *Spec, req childRequest, served int, serve bool,
	proofs *proofLog, energy *energyMeter, out *msgWriter) error {
	be, engine := pr.be, pr.engine
	tr := engine.Tracker()
	keyAddr, _ := pr.pk.MappingAddr()
	gomem := newGoMemory(keyAddr, req.HeapProfile != "")
	names := append(tr.Names(), seriesDeviceMemory, seriesDeviceQueued, seriesDeviceBusy, seriesDeviceSpan)
	names = append(names, gomem.names()...)
	pool, _ := be.(prover.HostReserver)
	if pool != nil && pool.HostPool().Bytes == 0 {
		pool = nil // nothing reserved: no columns rather than zeros
	}
	if pool != nil {
		names = append(names, seriesPinnedPool, seriesPinnedIdle)
	}
	peakReset := false
	if serve {
		// What the last repetition left for the collector is collected
		// now, outside the clock, not in the middle of this one.
		runtime.GC()
		debug.FreeOSMemory()
		peakReset = sample.ResetPeakRSS() == nil
	}
	// The backend counts buffers the pool could not serve since it
	// opened: a served repetition's are the difference.
	unpooled, hasUnpooled := be.(interface{ Unpooled() int64 })
	var unpooledBefore int64
	if hasUnpooled {
		unpooledBefore = unpooled.Unpooled()
	}
	windowBefore, windowOK := sample.CPUTimes(sample.Self)
	busyBefore := deviceBusy(be)
	energy.begin()
	start := time.Now()
	out.send(childMsg{Kind: msgReady, Names: names})

	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		streamSamples(tr, be, gomem, pool, len(names), spec.SampleInterval, start, out, stop)
	}()
	cpuBefore, cpuOK := cpuSeconds()
	faultsBefore := pageFaults()
	breakdown := startCPUMeter()
	report, runErr := engine.Run(ctx)
	joules := energy.end()
	cpuAfter, cpuOK2 := cpuSeconds()
	faultsAfter := pageFaults()
	cpuSplit := breakdown.stop()
	close(stop)
	<-sampled
	if runErr != nil {
		return fmt.Errorf("child: pipeline: %w", runErr)
	}

	busy := deviceBusy(be)
	for i := range busy {
		busy[i] -= busyBefore[i]
	}
	res := &childResult{
		Backend:          be.Name(),
		WhyNotCUDA:       pr.whyNotCUDA,
		Devices:          be.Devices(),
		KeyKind:          string(pr.pk.Kind),
		Verifiable:       pr.vk != nil && spec.Verify,
		WallSecs:         report.Wall.Seconds(),
		ElapsedSecs:      report.Elapsed.Seconds(),
		PartitionsDone:   report.PartitionsDone,
		PartitionsFailed: report.PartitionsFailed,
		ProofsDone:       report.ProofsDone,
		ProofsFailed:     report.ProofsFailed,
		DeviceBusy:       busy,
		PeakCounters:     map[string]int64{},
		FinalCounters:    tr.Live(),
		Stages:           map[string]results.StageSummary{},
		Measure:          results.MeasureWarm,
		EnergyJoules:     joules,
		CPUBreakdown:     cpuSplit,
	}
	if served == 1 {
		// The setup was paid before this repetition alone.
		setup := pr.setup.Seconds()
		res.SetupSecs, res.SetupStages = &setup, pr.setupSeconds()
	}
	if serve {
		res.Worker = &results.Worker{Served: served, PID: os.Getpid(), PeakReset: peakReset}
	}
	if d, ok := be.(prover.Describer); ok {
		res.ProverSettings = d.Settings()
	}
	if spec.Cold() {
		res.Measure = results.MeasureCold
	}
	if hasUnpooled && pool != nil {
		n := unpooled.Unpooled() - unpooledBefore
		res.UnpooledBuffers = &n
	}
	res.FirstStartSecs = firstStart(report.Partitions)
	if cpuOK && cpuOK2 {
		c := cpuAfter - cpuBefore
		res.RunCPUSecs = &c
	}
	res.MinorFaults, res.MajorFaults = faultsAfter.since(faultsBefore)
	for i := range report.Partitions {
		if err := report.Partitions[i].Err; err != nil {
			res.FirstError = err.Error()
			break
		}
	}
	var snap pipeline.Snapshot
	tr.Snapshot(&snap)
	for i, name := range tr.Names() {
		res.PeakCounters[name] = snap.Peaks[i]
	}
	for name, st := range pipeline.Summarize(report.Partitions) {
		res.Stages[name] = StageSummary(st)
	}
	res.DeviceSecsPerPartition, res.DeviceStageSecs = deviceTimes(res.Stages)
	res.ProofsVerified, res.VerifyFailed = verifyProofs(pr.vk, proofs.taken(), spec.Workload.Partitions)
	if req.HeapProfile != "" && gomem.heap.Len() > 0 {
		if err := results.WriteFile(req.HeapProfile, gomem.heap.Bytes()); err != nil {
			return fmt.Errorf("child: heap profile: %w", err)
		}
		res.HeapProfileSecs = &gomem.profileAt
	}
	if p, err := sample.NewProcess(os.Getpid()); err == nil {
		var s sample.ProcSample
		if p.Sample(&s) == nil {
			res.VmHWM = s.PeakRSSBytes
		}
		p.Close()
	}
	if windowAfter, ok := sample.CPUTimes(sample.Self); ok && windowOK && serve {
		// A served repetition's process lives on: its CPU time over the
		// repetition is this difference, not what wait4 reports at exit.
		u, sy := windowAfter.User-windowBefore.User, windowAfter.System-windowBefore.System
		res.WindowUserSecs, res.WindowSystemSecs = &u, &sy
	}
	out.send(childMsg{Kind: msgDone, T: time.Since(start).Seconds(), Result: res})
	return out.err
}

// proofLog collects the proofs of one repetition for verification after
// its clock stops.
type proofLog struct {
	mu     sync.Mutex
	proofs []provedPartition
}

func (l *proofLog) add(public []fr.Element, p *groth16.Proof) error {
	l.mu.Lock()
	l.proofs = append(l.proofs, provedPartition{append([]fr.Element(nil), public...), *p})
	l.mu.Unlock()
	return nil
}

func (l *proofLog) taken() []provedPartition {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.proofs
}

func (l *proofLog) reset() {
	l.mu.Lock()
	l.proofs = nil
	l.mu.Unlock()
}

// openBackend opens the spec's backend; for auto on the CPU, it also says
// why CUDA was not used.
func openBackend(spec Spec) (prover.Backend, string, error) {
	be, why, err := backends.OpenExplained(spec.Backend, backends.Options{Devices: spec.Devices})
	if why != nil {
		return be, why.Error(), err
	}
	return be, "", err
}

type provedPartition struct {
	public []fr.Element
	proof  groth16.Proof
}

// verifyProofs checks every proved partition and returns how many whole
// proofs verified (all their partitions did) and how many partitions failed.
func verifyProofs(vk *groth16.VerifyingKey, proofs []provedPartition, perProof int) (verified, failed int) {
	if vk == nil || len(proofs) == 0 {
		return 0, 0
	}
	for _, p := range proofs {
		if err := groth16.Verify(vk, p.public, &p.proof); err != nil {
			failed++
		}
	}
	if failed == 0 {
		return len(proofs) / max(perProof, 1), 0
	}
	return 0, failed
}

func deviceBusy(be prover.Backend) []time.Duration {
	out := make([]time.Duration, be.Devices())
	for d := range out {
		out[d] = be.Stats(d).Busy
	}
	return out
}

// streamSamples sends the tracker's live counters and the devices' stats
// (memory, queued, busy and span) and the Go runtime's memory every
// interval until stop closes, then once more.
func streamSamples(tr *pipeline.Tracker, be prover.Backend, gomem *goMemory, pool prover.HostReserver, n int, interval time.Duration, start time.Time, out *msgWriter, stop <-chan struct{}) {
	if interval <= 0 {
		interval = 10 * time.Millisecond
	}
	var snap pipeline.Snapshot
	values := make([]int64, n)
	nrt := len(gomem.names())
	npool := 0
	if pool != nil {
		npool = 2
	}
	dev := n - npool - nrt - 4 // the device stats follow the tracker's counters
	emit := func() {
		now := time.Now()
		t := now.Sub(start).Seconds()
		tr.Snapshot(&snap)
		copy(values, snap.Values)
		var mem, queued int64
		var busy, span time.Duration
		for d := range be.Devices() {
			st := be.Stats(d)
			mem += st.MemoryBytes
			queued += int64(st.Queued)
			busy += st.Busy
			span += st.Span
		}
		values[dev], values[dev+1], values[dev+2], values[dev+3] = mem, queued, busy.Microseconds(), span.Microseconds()
		gomem.read(values[dev+4:dev+4+nrt], now, t)
		if pool != nil {
			st := pool.HostPool()
			values[n-2], values[n-1] = st.Bytes, st.IdleBytes
		}
		out.send(childMsg{Kind: msgSample, T: t, Values: values})
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			emit()
			return
		case <-tick.C:
			emit()
		}
	}
}
