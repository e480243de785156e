package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/bench/sample"
)

// interruptGrace is how long a child gets to stop by itself after the user
// interrupts the run, before it is killed.
const interruptGrace = 5 * time.Second

// stderrKeep bounds what is kept of a child's stderr for error messages.
const stderrKeep = 16 << 10

// runRepetition runs one repetition in a child process and samples it. It
// always returns a record: failures of every kind end up in its Status.
func (r *Runner) runRepetition(ctx context.Context, spec *Spec, idx int, warmup bool, progress Progress) results.Repetition {
	rep := results.Repetition{Index: idx, Warmup: warmup, StartedAt: time.Now().UTC()}
	fail := func(status results.Status, err error) results.Repetition {
		rep.Status, rep.Error = status, err.Error()
		return rep
	}
	job, err := json.Marshal(childJob{Spec: *spec, Repetition: idx, Warmup: warmup, CacheDir: r.CacheDir})
	if err != nil {
		return fail(results.StatusFailed, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fail(results.StatusFailed, fmt.Errorf("stream pipe: %w", err))
	}
	defer pr.Close()
	stderr := &tailBuffer{max: stderrKeep}
	cmd := exec.Command(r.Exe, "child")
	cmd.Stdin = bytes.NewReader(job)
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	cmd.ExtraFiles = []*os.File{pw}
	spawned := time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		return fail(results.StatusFailed, fmt.Errorf("start child: %w", err))
	}
	pw.Close()

	proc, perr := sample.NewProcess(cmd.Process.Pid)
	if perr == nil {
		defer proc.Close()
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the result is read from cmd.ProcessState below
		close(exited)
	}()
	stream := newStreamReader(pr)

	interval := spec.SampleInterval
	if interval <= 0 {
		interval = 10 * time.Millisecond
	}
	var deadline <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()

	rec := newRecorder(interval, r.GPU != nil)
	var stopStatus results.Status // set when the parent stops the child
	var stopErr error
	var last sample.ProcSample
	var lastProgress time.Time
	kill := func(status results.Status, err error) {
		if stopStatus == "" {
			stopStatus, stopErr = status, err
			_ = cmd.Process.Kill()
		}
	}
	interrupted := ctx.Done()
	var graceDeadline <-chan time.Time
loop:
	for {
		select {
		case <-exited:
			break loop
		case <-interrupted:
			// The terminal's SIGINT reaches the child too; give it a moment
			// to stop cleanly, then kill it.
			interrupted = nil
			stopStatus, stopErr = results.StatusCancelled, ctx.Err()
			_ = cmd.Process.Signal(syscall.SIGINT)
			graceDeadline = time.After(interruptGrace)
		case <-graceDeadline:
			_ = cmd.Process.Kill()
		case <-deadline:
			kill(results.StatusTimeout, fmt.Errorf("ran past the scenario's timeout of %s", spec.Timeout))
		case now := <-tick.C:
			var s sample.ProcSample
			if proc == nil || proc.Sample(&s) != nil {
				continue
			}
			last = s
			var g *GPUReading
			if r.GPU != nil {
				if gr, err := r.GPU.Sample(cmd.Process.Pid); err == nil {
					g = &gr
				}
			}
			rec.add(now, s.RSSBytes, g, stream.latest())
			if spec.MemoryLimit > 0 && s.RSSBytes > uint64(spec.MemoryLimit) {
				kill(results.StatusMemoryLimit, fmt.Errorf("RSS %d bytes passed the scenario's memory limit of %d bytes", s.RSSBytes, spec.MemoryLimit))
			}
			if now.Sub(lastProgress) >= 200*time.Millisecond {
				lastProgress = now
				done, _ := stream.counter("partitions_done")
				progress.Tick(spec, now.Sub(spawned), int(done), s.RSSBytes)
			}
		}
	}
	<-stream.done // the pipe closes when the child exits
	end := time.Now()
	rep.ProcessSeconds = end.Sub(spawned).Seconds()

	t0, ready := stream.readyAt()
	if !ready {
		t0 = end
	}
	rep.Series = rec.series(t0, stream.names())
	rep.PeakRSSSampledBytes = rec.peakRSS
	if r.GPU != nil {
		rep.PeakGPUMemoryBytes = &rec.peakGPUProc
		rep.PeakGPUDeviceMemoryBytes = &rec.peakGPUDev
		if rec.gpuSamples > 0 {
			u := rec.gpuUtilSum / float64(rec.gpuSamples)
			rep.MeanGPUUtilization = &u
		}
	}
	if usage, err := sample.ExitUsage(cmd.ProcessState); err == nil {
		rep.CPUUserSeconds, rep.CPUSystemSeconds = usage.UserSeconds, usage.SystemSeconds
		rep.PeakRSSBytes, rep.PeakRSSSource = usage.PeakRSSBytes, results.PeakFromRusage
	}
	if last.PeakRSSBytes > 0 {
		rep.PeakRSSBytes, rep.PeakRSSSource = last.PeakRSSBytes, results.PeakFromSampledVmHWM
	}
	res, childErr := stream.outcome()
	if res != nil {
		fillFromChild(&rep, res)
		rep.SteadyDeviceBusyFraction = steadyBusyFraction(rep.Series, res.PartitionsDone, res.Devices)
	}
	switch {
	case stopStatus != "":
		rep.Status, rep.Error = stopStatus, stopErr.Error()
	case childErr != "":
		rep.Status, rep.Error = results.StatusFailed, childErr
	case res == nil:
		rep.Status = results.StatusCrashed
		rep.Error = fmt.Sprintf("child %s without a result", describeExit(cmd.ProcessState))
		if tail := stderr.String(); tail != "" {
			rep.Error += ": " + tail
		}
	case res.PartitionsFailed > 0 || res.ProofsFailed > 0:
		rep.Status = results.StatusFailed
		rep.Error = fmt.Sprintf("%d partitions failed: %s", res.PartitionsFailed, res.FirstError)
	case res.VerifyFailed > 0:
		rep.Status = results.StatusFailed
		rep.Error = fmt.Sprintf("%d partitions' proofs did not verify", res.VerifyFailed)
	default:
		rep.Status = results.StatusOK
		for name, v := range res.FinalCounters {
			if v != 0 {
				rep.Status = results.StatusFailed
				rep.Error = fmt.Sprintf("counter %s ended at %d, not 0: the pipeline leaked", name, v)
				break
			}
		}
	}
	return rep
}

// fillFromChild copies the child's own account into the record.
func fillFromChild(rep *results.Repetition, res *childResult) {
	rep.WallSeconds = res.WallSecs
	rep.Partitions = res.PartitionsDone
	rep.FailedPartitions = res.PartitionsFailed
	rep.Proofs = res.ProofsDone
	if res.WallSecs > 0 {
		rep.PartitionsPerSecond = float64(res.PartitionsDone) / res.WallSecs
	}
	if res.ProofsDone > 0 {
		rep.SecondsPerProof = res.WallSecs / float64(res.ProofsDone)
	}
	rep.Verifiable = res.Verifiable
	rep.ProofsVerified = res.ProofsVerified
	rep.PeakCounters = res.PeakCounters
	rep.FinalCounters = res.FinalCounters
	rep.Stages = res.Stages
	if len(res.DeviceBusy) > 0 && res.WallSecs > 0 {
		var sum time.Duration
		for _, b := range res.DeviceBusy {
			sum += b
		}
		rep.DeviceBusyFraction = sum.Seconds() / res.WallSecs / float64(len(res.DeviceBusy))
	}
	// The child's VmHWM read as it finished and the parent's last sample
	// of it are both the kernel's exact figure at their moment: the larger
	// is the later, and the peak.
	if res.VmHWM > 0 && (rep.PeakRSSSource != results.PeakFromSampledVmHWM || res.VmHWM >= rep.PeakRSSBytes) {
		rep.PeakRSSBytes, rep.PeakRSSSource = res.VmHWM, results.PeakFromVmHWM
	}
}

func describeExit(ps *os.ProcessState) string {
	if ps == nil {
		return "did not start"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %s", ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}

// streamReader decodes the child's message stream in the background and
// keeps what the sampler needs: the latest values and the outcome.
type streamReader struct {
	mu       sync.Mutex
	ready    time.Time
	isReady  bool
	seriesNm []string
	index    map[string]int
	values   []int64
	result   *childResult
	errMsg   string
	done     chan struct{}
}

func newStreamReader(f *os.File) *streamReader {
	s := &streamReader{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			var m childMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				continue // a torn line from a killed child
			}
			s.handle(m)
		}
	}()
	return s
}

func (s *streamReader) handle(m childMsg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.Kind {
	case msgReady:
		s.ready, s.isReady = time.Now(), true
		s.seriesNm = m.Names
		s.index = make(map[string]int, len(m.Names))
		for i, n := range m.Names {
			s.index[n] = i
		}
	case msgSample:
		if len(m.Values) == len(s.seriesNm) {
			s.values = append(s.values[:0], m.Values...)
		}
	case msgDone:
		s.result = m.Result
	case msgError:
		s.errMsg = m.Error
	}
}

func (s *streamReader) readyAt() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready, s.isReady
}

// latest returns a copy of the latest sampled values (nil before the first).
func (s *streamReader) latest() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.values == nil {
		return nil
	}
	return append([]int64(nil), s.values...)
}

func (s *streamReader) counter(name string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[name]
	if !ok || i >= len(s.values) {
		return 0, false
	}
	return s.values[i], true
}

func (s *streamReader) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seriesNm
}

func (s *streamReader) outcome() (*childResult, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result, s.errMsg
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = b.buf[len(b.buf)-b.max:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.TrimSpace(b.buf))
}
