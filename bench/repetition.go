package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/bench/sample"
	"github.com/provebench/provebench/internal/units"
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
	hwmEvery := max(1, int(hwmInterval/interval))
	ticks := 0
	var lastProgress time.Time
	kill := func(status results.Status, err error) {
		if stopStatus == "" {
			stopStatus, stopErr = status, err
			// The kernel's peak right before the kill: the last periodic
			// read may be up to hwmInterval old.
			if proc != nil {
				var s sample.ProcSample
				if proc.Sample(&s) == nil {
					last = s
				}
			}
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
			stopStatus, stopErr = results.StatusCancelled, interruptError(ctx)
			_ = cmd.Process.Signal(syscall.SIGINT)
			graceDeadline = time.After(interruptGrace)
		case <-graceDeadline:
			_ = cmd.Process.Kill()
		case <-deadline:
			kill(results.StatusTimeout, fmt.Errorf("ran past the scenario's timeout of %s", spec.Timeout))
		case <-tick.C:
			// Stamped when read, not with the tick's value (when the tick
			// was due): under load (the race detector) those drifted
			// apart, and rows came out of time order.
			now := time.Now()
			if proc == nil {
				continue
			}
			// RSS every tick from statm (cheap); the kernel's peak from
			// status every hwmEvery ticks, for a child that dies before
			// reporting its own.
			rss, err := proc.RSS()
			if err != nil {
				continue
			}
			if ticks%hwmEvery == 0 {
				var s sample.ProcSample
				if proc.Sample(&s) == nil {
					last = s
				}
			}
			ticks++
			stream.poll(now, false)
			var g *GPUReading
			if r.GPU != nil {
				if gr, err := r.GPU.Sample(cmd.Process.Pid); err == nil {
					g = &gr
				}
			}
			values, valuesT := stream.latest()
			rec.add(now, rss, g, values, valuesT)
			if spec.MemoryLimit > 0 && rss > uint64(spec.MemoryLimit) {
				kill(results.StatusMemoryLimit, fmt.Errorf("RSS %s passed the scenario's memory limit of %s", units.FormatBytes(int64(rss)), units.FormatBytes(spec.MemoryLimit)))
			}
			if now.Sub(lastProgress) >= 200*time.Millisecond {
				lastProgress = now
				done, _ := stream.counter("partitions_done")
				progress.Tick(spec, now.Sub(spawned), int(done), rss)
			}
		}
	}
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
	switch {
	case stopStatus != "":
		rep.Status, rep.Error = stopStatus, stopErr.Error()
	case overLimit(spec, &rep):
		// The sampler saw RSS only at its ticks; the kernel's peak says
		// the limit was passed between them.
		rep.Status = results.StatusMemoryLimit
		rep.Error = fmt.Sprintf("peak RSS %s (%s) passed the scenario's memory limit of %s between samples", units.FormatBytes(int64(rep.PeakRSSBytes)), rep.PeakRSSSource, units.FormatBytes(spec.MemoryLimit))
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

// overLimit reports whether the kernel's exact peak of the child passed
// the memory limit. wait4's figure does not count: it may be the parent's.
func overLimit(spec *Spec, rep *results.Repetition) bool {
	exact := rep.PeakRSSSource == results.PeakFromVmHWM || rep.PeakRSSSource == results.PeakFromSampledVmHWM
	return spec.MemoryLimit > 0 && exact && rep.PeakRSSBytes > uint64(spec.MemoryLimit)
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
		rep.DeviceBusyFraction = sum.Seconds() / span / float64(len(res.DeviceBusy))
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
// directory: heap-<name>-<index>.pprof, the name kept to letters, digits,
// '.', '_' and '-'.
func heapProfileName(name string, idx int) string {
	safe := strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '_' || r == '-' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')) {
			return r
		}
		return '-'
	}, name)
	return fmt.Sprintf("heap-%s-%d.pprof", safe, idx)
}

// interruptError says why a repetition was stopped when the run's context
// ended: in words for an interrupt ("context canceled" tells a user
// nothing), with the cause when the context was given one.
func interruptError(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return fmt.Errorf("stopped before it finished: %w", cause)
	}
	return errors.New("stopped by an interrupt before it finished")
}
