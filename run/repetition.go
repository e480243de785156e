package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/provebench/provebench/internal/fsname"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/sample"
	"github.com/provebench/provebench/run/supervise"
	"golang.org/x/sys/unix"
)

// interruptGrace is how long a child gets to stop by itself after the user
// interrupts the run, before it is killed.
const interruptGrace = 5 * time.Second

// hwmInterval is how often the parent reads the child's VmHWM, which costs
// several times the RSS read: the child reports its own exact peak at its
// end, so this one only serves children that die first.
const hwmInterval = 100 * time.Millisecond

// stderrKeep bounds what is kept of a child's stderr for error messages.
const stderrKeep = 16 << 10

// runRepetition runs one repetition in a child process and samples it. It
// always returns a record: failures of every kind end up in its Status.
func (r *Runner) runRepetition(ctx context.Context, spec *Spec, idx int, warmup bool, progress Progress) results.Repetition {
	// Repetitions are numbered from 1 in the results, as everywhere a
	// person reads them.
	rep := results.Repetition{Index: idx + 1, Warmup: warmup, StartedAt: time.Now().UTC()}
	fail := func(status results.Status, err error) results.Repetition {
		rep.Status, rep.Error = status, err.Error()
		return rep
	}
	cj := childJob{Spec: *spec, Repetition: idx, Warmup: warmup, CacheDir: r.CacheDir, ParentPID: os.Getpid()}
	if r.HeapProfiles && !warmup {
		cj.HeapProfile = filepath.Join(r.OutDir, heapProfileName(spec.Name, rep.Index))
	}
	job, err := json.Marshal(cj)
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
	// The child dies with its parent: a parent killed with SIGKILL can no
	// longer enforce the timeout or the memory limit, and a child left
	// running would skew whatever runs next. The kernel sends Pdeathsig
	// when the thread that started the child exits, not the process, so
	// this goroutine keeps its thread until the child is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	spawned := time.Now()
	hostLoad := sample.StartLoad(ctx)
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
	stream, err := newStreamReader(pr)
	if err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return fail(results.StatusFailed, err)
	}

	interval := spec.SampleInterval
	if interval <= 0 {
		interval = supervise.DefaultInterval
	}
	ct := &childTarget{r: r, cmd: cmd, proc: proc, stream: stream, rec: newRecorder(interval, r.GPU != nil)}
	stopped, _ := supervise.Watch(ctx, exited, ct, supervise.Config{
		Interval: interval, DetailInterval: hwmInterval, Timeout: spec.Timeout, MemoryLimit: spec.MemoryLimit, What: "RSS",
		Progress: func(at time.Time, rss uint64) {
			done, _ := stream.counter("partitions_done")
			progress.Tick(spec, at.Sub(spawned), int(done), rss)
		},
	})
	rec, last := ct.rec, ct.last
	stream.poll(time.Now(), true) // the rest, up to the end of the stream
	end := time.Now()
	rep.ProcessSeconds = end.Sub(spawned).Seconds()
	if h, err := hostLoad.Stop(); err == nil {
		rep.HostLoad = h
	}

	t0, ready := stream.readyAt()
	if !ready {
		t0 = end
	}
	rep.Series = rec.series(t0, stream.names())
	rep.PeakRSSSampledBytes = rec.peakRSS
	rep.PeakGPUMemoryBytes, rep.PeakGPUDeviceMemoryBytes, rep.MeanGPUUtilization = rec.gpuPeaks()
	if usage, err := sample.ExitUsage(cmd.ProcessState); err == nil {
		rep.CPUUserSeconds, rep.CPUSystemSeconds = usage.UserSeconds, usage.SystemSeconds
		rep.PeakRSSBytes, rep.PeakRSSSource = usage.PeakRSSBytes, results.PeakFromRusage
	}
	if last.PeakRSSBytes > 0 {
		rep.PeakRSSBytes, rep.PeakRSSSource = last.PeakRSSBytes, results.PeakFromSampledVmHWM
		// The last VmHWM read and the last RSS sample are two reads: a
		// child growing fast between them (16 MiB per 5 ms in the tests)
		// can leave the read peak below an RSS already seen, which the
		// kernel's peak never is.
		rep.PeakRSSBytes = max(rep.PeakRSSBytes, rec.peakRSS)
	}
	res, childErr := stream.outcome()
	if res != nil {
		fillFromChild(&rep, res)
		if res.HeapProfileSecs != nil {
			rep.HeapProfile = filepath.Base(cj.HeapProfile)
			rep.HeapProfileSeconds = res.HeapProfileSecs
		}
		if res.WhyNotCUDA != "" && !r.autoNoted {
			r.autoNoted = true
			r.warnf("backend auto: CUDA not used, running on the CPU: %s", res.WhyNotCUDA)
		}
		if f, ok := rec.steadyBusyFraction(stream.names(), res.PartitionsDone); ok {
			rep.SteadyDeviceBusyFraction = &f
		}
	}
	// wait4's figure does not count against the limit: it may be the
	// parent's.
	exact := rep.PeakRSSSource == results.PeakFromVmHWM || rep.PeakRSSSource == results.PeakFromSampledVmHWM
	overErr := supervise.OverLimit(spec.MemoryLimit, supervise.Peak{Bytes: rep.PeakRSSBytes, Source: rep.PeakRSSSource, Exact: exact})
	switch {
	case stopped.Status != "":
		rep.Status, rep.Error = stopped.Status, stopped.Err.Error()
	case overErr != nil:
		// The sampler saw RSS only at its ticks; the kernel's peak says
		// the limit was passed between them.
		rep.Status, rep.Error = results.StatusMemoryLimit, overErr.Error()
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
	// Busy over the pipeline's wall time (first admission to last
	// partition's end), as the README and the report define it; the
	// engine's whole Run only for a child that did not report a wall.
	span := res.WallSecs
	if span <= 0 {
		span = res.ElapsedSecs
	}
	if len(res.DeviceBusy) > 0 && span > 0 {
		var sum time.Duration
		for _, b := range res.DeviceBusy {
			sum += b
		}
		f := sum.Seconds() / span / float64(len(res.DeviceBusy))
		rep.DeviceBusyFraction = &f
	}
	// The child's VmHWM read as it finished and the parent's last sample
	// of it are both the kernel's exact figure at their moment: the larger
	// is the later, and the peak.
	if res.VmHWM > 0 && (rep.PeakRSSSource != results.PeakFromSampledVmHWM || res.VmHWM >= rep.PeakRSSBytes) {
		rep.PeakRSSBytes, rep.PeakRSSSource = res.VmHWM, results.PeakFromVmHWM
	}
	fillProverFigures(rep, res)
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

// streamReader decodes the child's message stream. The sampler polls it at
// every tick with a non-blocking read, so the parent wakes once per tick
// rather than once per message as well.
type streamReader struct {
	fd      int
	pending []byte
	chunk   []byte
	eof     bool

	// t0 is the pipeline's start on the parent's clock: the earliest of
	// receipt time minus the child's own timestamp over the messages, so
	// that polling delay does not shift the time axis.
	t0       time.Time
	haveT0   bool
	seriesNm []string
	index    map[string]int
	values   []int64
	valuesT  float64 // the child's timestamp of values
	result   *childResult
	errMsg   string
}

func newStreamReader(f *os.File) (*streamReader, error) {
	fd := int(f.Fd())
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("stream pipe: %w", err)
	}
	return &streamReader{fd: fd, chunk: make([]byte, 64<<10)}, nil
}

// poll reads and handles whatever the child has written; block waits for
// the end of the stream (the child has exited, so it comes at once).
func (s *streamReader) poll(now time.Time, block bool) {
	giveUp := now.Add(2 * time.Second)
	for !s.eof {
		n, err := unix.Read(s.fd, s.chunk)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if !block || time.Now().After(giveUp) {
				return
			}
			// The child is gone but a write end is still open somewhere:
			// wait briefly rather than spin.
			time.Sleep(time.Millisecond)
			continue
		case err != nil || n == 0:
			s.eof = true
		}
		s.pending = append(s.pending, s.chunk[:max(n, 0)]...)
		for {
			i := bytes.IndexByte(s.pending, '\n')
			if i < 0 {
				break
			}
			var m childMsg
			if json.Unmarshal(s.pending[:i], &m) == nil {
				s.handle(now, m)
			} // else a torn line from a killed child
			s.pending = s.pending[i+1:]
		}
	}
}

func (s *streamReader) handle(now time.Time, m childMsg) {
	if m.Kind == msgReady || m.Kind == msgSample || m.Kind == msgDone {
		if t0 := now.Add(-time.Duration(m.T * float64(time.Second))); !s.haveT0 || t0.Before(s.t0) {
			s.t0, s.haveT0 = t0, true
		}
	}
	switch m.Kind {
	case msgReady:
		s.seriesNm = m.Names
		s.index = make(map[string]int, len(m.Names))
		for i, n := range m.Names {
			s.index[n] = i
		}
	case msgSample:
		if len(m.Values) == len(s.seriesNm) {
			s.values, s.valuesT = m.Values, m.T
		}
	case msgDone:
		s.result = m.Result
	case msgError:
		s.errMsg = m.Error
	}
}

func (s *streamReader) readyAt() (time.Time, bool) { return s.t0, s.haveT0 }

// latest returns the latest sampled values (nil before the first). The
// slice is not modified afterwards: each message decodes into a new one.
func (s *streamReader) latest() ([]int64, float64) { return s.values, s.valuesT }

func (s *streamReader) counter(name string) (int64, bool) {
	i, ok := s.index[name]
	if !ok || i >= len(s.values) {
		return 0, false
	}
	return s.values[i], true
}

func (s *streamReader) names() []string { return s.seriesNm }

func (s *streamReader) outcome() (*childResult, string) { return s.result, s.errMsg }

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

// heapProfileName is a repetition's heap profile file inside the output
// directory: heap-<stem>-<index>.pprof, one file per configuration and
// repetition (see fsname.Stem).
func heapProfileName(name string, idx int) string {
	return fmt.Sprintf("heap-%s-%d.pprof", fsname.Stem(name), idx)
}

// childTarget is a child process as the supervising loop sees it.
type childTarget struct {
	r      *Runner
	cmd    *exec.Cmd
	proc   *sample.Process // nil when /proc could not be opened
	stream *streamReader
	rec    *recorder
	last   sample.ProcSample // the latest read of the kernel's peak
}

// Sample reads RSS every tick from statm (cheap), and the kernel's peak
// from status only on detailed ticks, for a child that dies before
// reporting its own.
func (c *childTarget) Sample(at time.Time, detail bool) (uint64, bool) {
	if c.proc == nil {
		return 0, false
	}
	rss, err := c.proc.RSS()
	if err != nil {
		return 0, false
	}
	if detail {
		c.readPeak()
	}
	c.stream.poll(at, false)
	var g *GPUReading
	if c.r.GPU != nil {
		if gr, err := c.r.GPU.Sample(c.cmd.Process.Pid); err == nil {
			g = &gr
		}
	}
	values, valuesT := c.stream.latest()
	c.rec.add(at, rss, g, values, valuesT)
	return rss, true
}

func (c *childTarget) readPeak() {
	if c.proc == nil {
		return
	}
	var s sample.ProcSample
	if c.proc.Sample(&s) == nil {
		c.last = s
	}
}

// Stop: on an interrupt the terminal's SIGINT reaches the child too; it
// gets a moment to stop cleanly. For its timeout or memory limit it is
// killed at once, its kernel peak read right before (the last periodic
// read may be up to hwmInterval old).
func (c *childTarget) Stop(why supervise.Reason) time.Duration {
	if why == supervise.Interrupt {
		_ = c.cmd.Process.Signal(syscall.SIGINT)
		return interruptGrace
	}
	c.readPeak()
	_ = c.cmd.Process.Kill()
	return 0
}

func (c *childTarget) Kill() { _ = c.cmd.Process.Kill() }
