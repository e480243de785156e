package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/bench/sample"
	"github.com/provebench/provebench/gpu"
	"github.com/provebench/provebench/gpu/backends"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/pipeline"
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
	var job childJob
	if err := json.NewDecoder(in).Decode(&job); err != nil {
		return fmt.Errorf("child: read job: %w", err)
	}
	if job.ParentPID != 0 && os.Getppid() != job.ParentPID {
		return fmt.Errorf("child: the parent that started this repetition (pid %d) is gone; not running unsupervised", job.ParentPID)
	}
	spec := job.Spec
	pk, vk, err := groth16.Cache{Dir: job.CacheDir}.Get(ctx, spec.Workload.Circuit(), spec.Key)
	if err != nil {
		return fmt.Errorf("child: proving key: %w", err)
	}
	defer pk.Close()
	be, whyNotCUDA, err := openBackend(spec)
	if err != nil {
		return fmt.Errorf("child: backend: %w", err)
	}
	defer be.Close()
	if err := be.Load(ctx, pk); err != nil {
		return fmt.Errorf("child: load key on %s: %w", be.Name(), err)
	}

	// Proofs are verified after the run, outside the measured time: a
	// pairing check per partition is not part of what the pipeline costs.
	var proofs []provedPartition
	var proofsMu sync.Mutex
	opts := pipeline.Options{Backend: be, Workload: spec.Workload, Config: spec.Pipeline}
	if spec.Verify && vk != nil {
		opts.Verify = func(public []fr.Element, p *groth16.Proof) error {
			proofsMu.Lock()
			proofs = append(proofs, provedPartition{append([]fr.Element(nil), public...), *p})
			proofsMu.Unlock()
			return nil
		}
	}
	engine, err := pipeline.New(opts)
	if err != nil {
		return fmt.Errorf("child: %w", err)
	}

	tr := engine.Tracker()
	keyAddr, _ := pk.MappingAddr()
	gomem := newGoMemory(keyAddr, job.HeapProfile != "")
	names := append(tr.Names(), seriesDeviceMemory, seriesDeviceQueued, seriesDeviceBusy, seriesDeviceSpan)
	names = append(names, gomem.names()...)
	busyBefore := deviceBusy(be)
	start := time.Now()
	out.send(childMsg{Kind: msgReady, Names: names})

	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		streamSamples(tr, be, gomem, len(names), spec.SampleInterval, start, out, stop)
	}()
	report, runErr := engine.Run(ctx)
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
		WhyNotCUDA:       whyNotCUDA,
		Devices:          be.Devices(),
		KeyKind:          string(pk.Kind),
		Verifiable:       vk != nil && spec.Verify,
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
	}
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
	res.ProofsVerified, res.VerifyFailed = verifyProofs(vk, proofs, spec.Workload.Partitions)
	if job.HeapProfile != "" && gomem.heap.Len() > 0 {
		if err := results.WriteFile(job.HeapProfile, gomem.heap.Bytes()); err != nil {
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
	out.send(childMsg{Kind: msgDone, T: time.Since(start).Seconds(), Result: res})
	return out.err
}

// openBackend opens the spec's backend; for auto on the CPU, it also says
// why CUDA was not used.
func openBackend(spec Spec) (gpu.Backend, string, error) {
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

func deviceBusy(be gpu.Backend) []time.Duration {
	out := make([]time.Duration, be.Devices())
	for d := range out {
		out[d] = be.Stats(d).Busy
	}
	return out
}

// streamSamples sends the tracker's live counters and the devices' stats
// (memory, queued, busy and span) and the Go runtime's memory every
// interval until stop closes, then once more.
func streamSamples(tr *pipeline.Tracker, be gpu.Backend, gomem *goMemory, n int, interval time.Duration, start time.Time, out *msgWriter, stop <-chan struct{}) {
	if interval <= 0 {
		interval = 10 * time.Millisecond
	}
	var snap pipeline.Snapshot
	values := make([]int64, n)
	nrt := len(gomem.names())
	dev := n - nrt - 4 // the device stats follow the tracker's counters
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
		gomem.read(values[dev+4:], now, t)
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
