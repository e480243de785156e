package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
// so that the peak it reports is the repetition's own. The steps keep
// their order: the window opens (peak reset, counters, clock), the run is
// measured, and then the result is read, verification and the kernel's
// peak last.
func serveRepetition(ctx context.Context, pr *preparedProver, spec *Spec, req childRequest, served int, serve bool,
	proofs *proofLog, energy *energyMeter, out *msgWriter) error {
	cols := planColumns(pr, req.HeapProfile != "")
	cols.probes = append(sample.Probes{energy}, sample.OwnRun()...)
	cols.probes = append(cols.probes, &cpuSplit{})
	w := openWindow(pr.be, serve)
	out.send(childMsg{Kind: msgReady, Names: cols.names})
	res := &childResult{}
	report, err := runMeasured(ctx, pr, spec.SampleInterval, cols, w.start, &res.Figures, out)
	if err != nil {
		return err
	}

	fillChildResult(res, pr, spec, report, w.busySince(pr.be))
	describeServing(res, pr, spec, served, serve, w.peakReset)
	res.Figures.UnpooledBuffers = w.unpooledSince(cols.pool != nil)
	summarizeRun(res, pr.engine.Tracker(), report)
	res.Figures.ProofsVerified, res.VerifyFailed = verifyProofs(pr.vk, proofs.taken(), spec.Workload.Partitions)
	if req.HeapProfile != "" && cols.gomem.heap.Len() > 0 {
		if err := results.WriteFile(req.HeapProfile, cols.gomem.heap.Bytes()); err != nil {
			return fmt.Errorf("child: heap profile: %w", err)
		}
		res.Figures.HeapProfile = filepath.Base(req.HeapProfile)
		res.Figures.HeapProfileSeconds = &cols.gomem.profileAt
	}
	res.Figures.Derive()
	res.VmHWM = kernelPeakRSS()
	if serve {
		// A served repetition's process lives on: its CPU time over the
		// repetition is this difference, not what wait4 reports at exit.
		res.WindowUserSecs, res.WindowSystemSecs = w.cpuSince()
	}
	out.send(childMsg{Kind: msgDone, T: time.Since(w.start).Seconds(), Result: res})
	return out.err
}

// sampleColumns are a repetition's sample series and what reads them: the
// tracker's counters, the devices' four, the Go runtime's and, where the
// backend reserved a page-locked pool, the pool's two, in the order
// streamSamples fills them.
type sampleColumns struct {
	names []string
	gomem *goMemory
	pool  prover.HostReserver // nil: no pool reserved
	// probes measure the run's figures; those that sample read at every
	// tick too.
	probes sample.Probes
}

func planColumns(pr *preparedProver, heapProfile bool) sampleColumns {
	keyAddr, _ := pr.pk.MappingAddr()
	gomem := newGoMemory(keyAddr, heapProfile)
	names := append(pr.engine.Tracker().Names(), seriesDeviceMemory, seriesDeviceQueued, seriesDeviceBusy, seriesDeviceSpan)
	names = append(names, gomem.names()...)
	pool, _ := pr.be.(prover.HostReserver)
	if pool != nil && pool.HostPool().Bytes == 0 {
		pool = nil // nothing reserved: no columns rather than zeros
	}
	if pool != nil {
		names = append(names, seriesPinnedPool, seriesPinnedIdle)
	}
	return sampleColumns{names: names, gomem: gomem, pool: pool}
}

// repWindow holds what a repetition's figures are differences from: the
// readings taken just before its clock starts.
type repWindow struct {
	peakReset bool // the kernel's peak RSS was reset for this repetition

	// unpooled is the backend's count of buffers its pool could not
	// serve since it opened; nil where it keeps none.
	unpooled       interface{ Unpooled() int64 }
	unpooledBefore int64

	cpu   sample.Times
	cpuOK bool
	busy  []time.Duration
	start time.Time
}

// openWindow takes the readings a repetition is measured from, in this
// order: a serving child's collection and peak reset first, so that
// neither falls inside the window, then the counters, then the clock.
func openWindow(be prover.Backend, serve bool) *repWindow {
	w := &repWindow{}
	if serve {
		// What the last repetition left for the collector is collected
		// now, outside the clock, not in the middle of this one.
		runtime.GC()
		debug.FreeOSMemory()
		w.peakReset = sample.ResetPeakRSS() == nil
	}
	// The backend counts buffers the pool could not serve since it
	// opened: a served repetition's are the difference.
	if u, ok := be.(interface{ Unpooled() int64 }); ok {
		w.unpooled, w.unpooledBefore = u, u.Unpooled()
	}
	w.cpu, w.cpuOK = sample.CPUTimes(sample.Self)
	w.busy = deviceBusy(be)
	w.start = time.Now()
	return w
}

// busySince is each device's busy time since the window opened.
func (w *repWindow) busySince(be prover.Backend) []time.Duration {
	busy := deviceBusy(be)
	for i := range busy {
		busy[i] -= w.busy[i]
	}
	return busy
}

// unpooledSince is the buffers the pool could not serve since the window
// opened; nil where the backend counts none or reserved no pool (pooled).
func (w *repWindow) unpooledSince(pooled bool) *int64 {
	if w.unpooled == nil || !pooled {
		return nil
	}
	n := w.unpooled.Unpooled() - w.unpooledBefore
	return &n
}

// cpuSince is this process's user and system time since the window
// opened; nil, nil where either reading failed.
func (w *repWindow) cpuSince() (user, system *float64) {
	after, ok := sample.CPUTimes(sample.Self)
	if !ok || !w.cpuOK {
		return nil, nil
	}
	u, sy := after.User-w.cpu.User, after.System-w.cpu.System
	return &u, &sy
}

// runMeasured runs the engine while the sampler streams cols from start,
// and brackets the run with the probes, right around it, so that their
// figures (into rep) are the run's and nothing of the window's opening or
// closing.
func runMeasured(ctx context.Context, pr *preparedProver, interval time.Duration, cols sampleColumns, start time.Time,
	rep *results.Repetition, out *msgWriter) (*pipeline.Report, error) {
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		streamSamples(pr.engine.Tracker(), pr.be, cols, interval, start, out, stop)
	}()
	cols.probes.Begin()
	report, runErr := pr.engine.Run(ctx)
	cols.probes.End(rep)
	close(stop)
	<-sampled
	if runErr != nil {
		return nil, fmt.Errorf("child: pipeline: %w", runErr)
	}
	return report, nil
}

// fillChildResult records what the run's report and the prover it ran on
// say: the prover, the engine's counts, and the devices' busy fraction.
func fillChildResult(res *childResult, pr *preparedProver, spec *Spec, report *pipeline.Report, busy []time.Duration) {
	res.Backend, res.WhyNotCUDA, res.Devices = pr.be.Name(), pr.whyNotCUDA, pr.be.Devices()
	res.KeyKind = string(pr.pk.Kind)
	res.ProofsFailed = report.ProofsFailed
	f := &res.Figures
	f.Verifiable = pr.vk != nil && spec.Verify
	f.WallSeconds = report.Wall.Seconds()
	f.Partitions, f.FailedPartitions, f.Proofs = report.PartitionsDone, report.PartitionsFailed, report.ProofsDone
	f.PeakCounters, f.FinalCounters = map[string]int64{}, pr.engine.Tracker().Live()
	f.Stages = map[string]results.StageSummary{}
	f.Measure = results.MeasureWarm
	f.DeviceBusyFraction = busyFraction(busy, f.WallSeconds, report.Elapsed.Seconds())
}

// busyFraction is the devices' busy time over the pipeline's wall time
// (first admission to last partition's end), as the README and the report
// define it, averaged over the devices; over the engine's whole Run
// (elapsed) only for a run without a wall. Nil without devices or time.
func busyFraction(busy []time.Duration, wall, elapsed float64) *float64 {
	span := wall
	if span <= 0 {
		span = elapsed
	}
	if len(busy) == 0 || span <= 0 {
		return nil
	}
	var sum time.Duration
	for _, b := range busy {
		sum += b
	}
	f := sum.Seconds() / span / float64(len(busy))
	return &f
}

// describeServing records how the repetition was served: the setup on the
// first a process serves, the worker, the prover's settings and the clock.
func describeServing(res *childResult, pr *preparedProver, spec *Spec, served int, serve, peakReset bool) {
	if served == 1 {
		// The setup was paid before this repetition alone.
		setup := pr.setup.Seconds()
		res.Figures.SetupSeconds, res.Figures.SetupStages = &setup, pr.setupSeconds()
	}
	if serve {
		res.Figures.Worker = &results.Worker{Served: served, PID: os.Getpid(), PeakReset: peakReset}
	}
	if d, ok := pr.be.(prover.Describer); ok {
		res.Figures.ProverSettings = d.Settings()
	}
	if spec.Cold() {
		res.Figures.Measure = results.MeasureCold
	}
}

// summarizeRun adds what the run's report and the tracker say: the first
// start, the first error, the counters' peaks and the stages' and devices'
// times.
func summarizeRun(res *childResult, tr *pipeline.Tracker, report *pipeline.Report) {
	f := &res.Figures
	f.FirstStartSeconds = firstStart(report.Partitions)
	for i := range report.Partitions {
		if err := report.Partitions[i].Err; err != nil {
			res.FirstError = err.Error()
			break
		}
	}
	var snap pipeline.Snapshot
	tr.Snapshot(&snap)
	for i, name := range tr.Names() {
		f.PeakCounters[name] = snap.Peaks[i]
	}
	for name, st := range pipeline.Summarize(report.Partitions) {
		f.Stages[name] = StageSummary(st)
	}
	f.DeviceSecondsPerPartition, f.DeviceStageSeconds = deviceTimes(f.Stages)
}

// kernelPeakRSS is this process's peak RSS as the kernel keeps it
// (VmHWM); 0 where it cannot be read.
func kernelPeakRSS() uint64 {
	p, err := sample.NewProcess(os.Getpid())
	if err != nil {
		return 0
	}
	defer p.Close()
	var s sample.ProcSample
	if p.Sample(&s) != nil {
		return 0
	}
	return s.PeakRSSBytes
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
func streamSamples(tr *pipeline.Tracker, be prover.Backend, cols sampleColumns, interval time.Duration, start time.Time, out *msgWriter, stop <-chan struct{}) {
	gomem, pool, n := cols.gomem, cols.pool, len(cols.names)
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
		cols.probes.Sample()
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
