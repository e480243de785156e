package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// runRepetition runs one repetition in a child process of its own and
// samples it. It always returns a record: failures of every kind end up in
// its Status.
func (r *Runner) runRepetition(ctx context.Context, spec *Spec, idx int, warmup bool, progress Progress) results.Repetition {
	w, rep := r.startWorker(ctx, spec, idx, warmup, false)
	if w == nil {
		return rep
	}
	defer w.close()
	return r.serveOn(ctx, w, spec, rep, progress)
}

// worker is a child process that runs repetitions of one configuration:
// one, and exits, or, serving, one per request until its stdin closes.
type worker struct {
	cmd    *exec.Cmd
	proc   *sample.Process // nil when /proc could not be opened
	stream *streamReader
	stdin  io.WriteCloser // a serving worker's requests; nil otherwise
	stderr *supervise.TailBuffer
	exited chan struct{} // closed once the process has been waited for
	serve  bool
	served int // repetitions asked of it so far
	// heapProfile is the path the current repetition's heap profile goes
	// to, "" for none.
	heapProfile string
	pr          *os.File
	// unlock gives back the OS thread the worker was started from (see
	// startWorker); called once, by close.
	unlock func()
}

// startWorker starts a child for spec whose first repetition is (idx,
// warmup), serving more afterwards when serve is set. It returns the new
// record of that repetition and the worker, or a nil worker and the
// record of the failure.
func (r *Runner) startWorker(ctx context.Context, spec *Spec, idx int, warmup, serve bool) (*worker, results.Repetition) {
	// Repetitions are numbered from 1 in the results, as everywhere a
	// person reads them.
	rep := results.Repetition{Index: idx + 1, Warmup: warmup, StartedAt: time.Now().UTC()}
	fail := func(status results.Status, err error) (*worker, results.Repetition) {
		rep.Status, rep.Error = status, err.Error()
		return nil, rep
	}
	cj := childJob{Spec: *spec, Repetition: idx, Warmup: warmup, CacheDir: r.CacheDir, ParentPID: os.Getpid(), Serve: serve}
	cj.HeapProfile = r.heapProfilePath(spec, rep.Index, warmup)
	job, err := json.Marshal(cj)
	if err != nil {
		return fail(results.StatusFailed, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fail(results.StatusFailed, fmt.Errorf("stream pipe: %w", err))
	}
	w := &worker{stderr: &supervise.TailBuffer{Max: stderrKeep}, exited: make(chan struct{}), serve: serve, served: 1, heapProfile: cj.HeapProfile, pr: pr}
	cmd := exec.Command(r.Exe, "child")
	if serve {
		in, err := cmd.StdinPipe()
		if err != nil {
			pr.Close()
			pw.Close()
			return fail(results.StatusFailed, fmt.Errorf("request pipe: %w", err))
		}
		w.stdin = in
	} else {
		cmd.Stdin = bytes.NewReader(job)
	}
	cmd.Stdout = w.stderr
	cmd.Stderr = w.stderr
	cmd.ExtraFiles = []*os.File{pw}
	// The child dies with its parent: a parent killed with SIGKILL can no
	// longer enforce the timeout or the memory limit, and a child left
	// running would skew whatever runs next. The kernel sends Pdeathsig
	// when the thread that started the child exits, not the process, so
	// the goroutine that starts a worker keeps its thread until the child
	// is gone (close gives it back).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	w.unlock = sync.OnceFunc(runtime.UnlockOSThread)
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		w.unlock()
		return fail(results.StatusFailed, fmt.Errorf("start child: %w", err))
	}
	pw.Close()
	w.cmd = cmd
	if serve {
		if _, err := w.stdin.Write(append(job, '\n')); err != nil {
			w.close()
			return fail(results.StatusFailed, fmt.Errorf("send the job: %w", err))
		}
	}
	if proc, err := sample.NewProcess(cmd.Process.Pid); err == nil {
		w.proc = proc
	}
	go func() {
		_ = cmd.Wait() // the result is read from cmd.ProcessState
		close(w.exited)
	}()
	if w.stream, err = newStreamReader(pr); err != nil {
		w.close()
		return fail(results.StatusFailed, err)
	}
	return w, rep
}

// heapProfilePath is where a measured repetition's child writes its heap
// profile, "" when none is asked for.
func (r *Runner) heapProfilePath(spec *Spec, index int, warmup bool) string {
	if !r.HeapProfiles || warmup {
		return ""
	}
	return filepath.Join(r.OutDir, heapProfileName(spec.Name, index))
}

// dead reports whether the worker's process has exited.
func (w *worker) dead() bool {
	select {
	case <-w.exited:
		return true
	default:
		return false
	}
}

// request asks a serving worker for its next repetition and returns that
// repetition's new record; a worker that cannot take it is dead, and the
// record says so.
func (w *worker) request(r *Runner, spec *Spec, idx int, warmup bool) (results.Repetition, error) {
	rep := results.Repetition{Index: idx + 1, Warmup: warmup, StartedAt: time.Now().UTC()}
	w.heapProfile = r.heapProfilePath(spec, rep.Index, warmup)
	line, err := json.Marshal(childRequest{Repetition: idx, Warmup: warmup, HeapProfile: w.heapProfile})
	if err != nil {
		return rep, err
	}
	w.stream.next()
	if _, err := w.stdin.Write(append(line, '\n')); err != nil {
		return rep, fmt.Errorf("the warm worker (pid %d) took no request: %w", w.cmd.Process.Pid, err)
	}
	w.served++
	return rep, nil
}

// close ends the worker: a serving one is told there is no more work and
// given a moment to exit by itself; any worker still up after that is
// killed. It waits until the process is gone.
func (w *worker) close() {
	if w.cmd != nil {
		if w.stdin != nil {
			_ = w.stdin.Close()
			select {
			case <-w.exited:
			case <-time.After(interruptGrace):
			}
		}
		_ = w.cmd.Process.Kill()
		<-w.exited
	}
	if w.proc != nil {
		w.proc.Close()
	}
	w.pr.Close()
	w.unlock()
}

// serveOn supervises the repetition rep that w is running until it ends,
// and completes its record.
func (r *Runner) serveOn(ctx context.Context, w *worker, spec *Spec, rep results.Repetition, progress Progress) results.Repetition {
	began := time.Now()
	hostLoad := sample.StartLoadOf(ctx, w.ownCPU)
	interval := spec.SampleInterval
	if interval <= 0 {
		interval = supervise.DefaultInterval
	}
	ct := &childTarget{r: r, cmd: w.cmd, proc: w.proc, stream: w.stream, rec: supervise.NewRecorder(interval, r.GPU != nil)}
	var ended <-chan struct{} = w.exited
	if w.serve {
		ended = ct.ended(w.exited)
	}
	stopped, _ := supervise.Watch(ctx, ended, ct, supervise.Config{
		Interval: interval, DetailInterval: hwmInterval, Timeout: spec.Timeout, MemoryLimit: spec.MemoryLimit, What: "RSS",
		Progress: func(at time.Time, rss uint64) {
			done, _ := w.stream.counter("partitions_done")
			progress.Tick(spec, at.Sub(began), int(done), rss)
		},
	})
	rec, last := ct.rec, ct.last
	if w.dead() {
		w.stream.poll(time.Now(), true) // the rest, up to the end of the stream
	} else {
		w.stream.poll(time.Now(), false)
	}
	res, childErr := w.stream.outcome()
	if res != nil {
		rep.Adopt(res.Figures) // the child's figures, as it measured them
	}
	end := time.Now()
	rep.ProcessSeconds = end.Sub(began).Seconds()
	if h, err := hostLoad.Stop(); err == nil {
		rep.HostLoad = h
	}
	t0, ready := w.stream.readyAt()
	if !ready {
		t0 = end
	}
	rep.Series = rec.Series(t0, w.stream.names())
	rep.PeakRSSSampledBytes = rec.PeakRSS
	rep.PeakGPUMemoryBytes, rep.PeakGPUDeviceMemoryBytes, rep.MeanGPUUtilization = rec.GPUPeaks()
	if w.dead() {
		if usage, err := sample.ExitUsage(w.cmd.ProcessState); err == nil && !w.servedBefore() {
			rep.CPUUserSeconds, rep.CPUSystemSeconds = usage.UserSeconds, usage.SystemSeconds
			rep.PeakRSSBytes, rep.PeakRSSSource = usage.PeakRSSBytes, results.PeakFromRusage
		}
	}
	if last.PeakRSSBytes > 0 {
		rep.PeakRSSBytes, rep.PeakRSSSource = last.PeakRSSBytes, results.PeakFromSampledVmHWM
		// The last VmHWM read and the last RSS sample are two reads: a
		// child growing fast between them (as the tests' child does)
		// can leave the read peak below an RSS already seen, which the
		// kernel's peak never is.
		rep.PeakRSSBytes = max(rep.PeakRSSBytes, rec.PeakRSS)
	}
	if res != nil {
		r.fillServed(&rep, w, res, rec)
	}
	rep.Status, rep.Error = r.verdict(spec, &rep, stopped, res, childErr, w)
	return rep
}

// servedBefore reports whether the worker ran repetitions before the
// current one: its process's whole figures (wait4's) are not this one's.
func (w *worker) servedBefore() bool { return w.served > 1 }

// ownCPU is the CPU time of the measured processes so far: this process
// (the sampler), its reaped children (a worker that has exited) and the
// worker while it runs. The host's busy time beyond it is the neighbours'.
func (w *worker) ownCPU() (float64, bool) {
	self, ok := sample.CPUSeconds(sample.Self)
	if !ok {
		return 0, false
	}
	children, _ := sample.CPUSeconds(sample.Children)
	own := self + children
	if w.proc != nil && !w.dead() {
		var s sample.ProcSample
		if w.proc.Sample(&s) == nil {
			own += s.UserSeconds + s.SystemSeconds
		}
	}
	return own, true
}

// fillServed adds to the child's figures what the parent weighs against
// its own readings: the kernel's peak (the child's VmHWM or the parent's
// last reading of it, whichever came later), the steady busy fraction from
// the samples, and what a warm worker's repetition records differently:
// its CPU time over the repetition alone, and its peak since the reset (or
// the sampled one where the reset failed).
func (r *Runner) fillServed(rep *results.Repetition, w *worker, res *childResult, rec *supervise.Recorder) {
	// The child's VmHWM read as it finished and the parent's last sample
	// of it are both the kernel's exact figure at their moment: the larger
	// is the later, and the peak.
	if res.VmHWM > 0 && (rep.PeakRSSSource != results.PeakFromSampledVmHWM || res.VmHWM >= rep.PeakRSSBytes) {
		rep.PeakRSSBytes, rep.PeakRSSSource = res.VmHWM, results.PeakFromVmHWM
	}
	if res.WhyNotCUDA != "" && !r.autoNoted {
		r.autoNoted = true
		r.warnf("backend auto: CUDA not used, running on the CPU: %s", res.WhyNotCUDA)
	}
	if f, ok := steadyBusyFraction(rec.Rows(), w.stream.names(), rep.Partitions); ok {
		rep.SteadyDeviceBusyFraction = &f
	}
	if rep.Worker == nil {
		return
	}
	if res.WindowUserSecs != nil && res.WindowSystemSecs != nil {
		rep.CPUUserSeconds, rep.CPUSystemSeconds = *res.WindowUserSecs, *res.WindowSystemSecs
	}
	if !rep.Worker.PeakReset {
		rep.PeakRSSBytes, rep.PeakRSSSource = rec.PeakRSS, results.PeakFromSampled
	}
}

// verdict is a finished repetition's status and error: stopped by the
// loop, over its memory limit between samples, failed in the child, or
// crashed, or ok with every live counter back at zero.
func (r *Runner) verdict(spec *Spec, rep *results.Repetition, stopped supervise.Stopped, res *childResult, childErr string, w *worker) (results.Status, string) {
	// wait4's figure does not count against the limit: it may be the
	// parent's.
	exact := rep.PeakRSSSource == results.PeakFromVmHWM || rep.PeakRSSSource == results.PeakFromSampledVmHWM
	overErr := supervise.OverLimit(spec.MemoryLimit, supervise.Peak{Bytes: rep.PeakRSSBytes, Source: rep.PeakRSSSource, Exact: exact})
	switch {
	case stopped.Status != "":
		return stopped.Status, stopped.Err.Error()
	case overErr != nil:
		// The sampler saw RSS only at its ticks; the kernel's peak says
		// the limit was passed between them.
		return results.StatusMemoryLimit, overErr.Error()
	case childErr != "":
		return results.StatusFailed, childErr
	case res == nil:
		msg := fmt.Sprintf("child %s without a result", supervise.DescribeExit(w.cmd.ProcessState))
		if tail := w.stderr.Crash(); tail != "" {
			msg += ": " + tail
		}
		return results.StatusCrashed, msg
	case res.Figures.FailedPartitions > 0 || res.ProofsFailed > 0:
		return results.StatusFailed, fmt.Sprintf("%d partitions failed: %s", res.Figures.FailedPartitions, res.FirstError)
	case res.VerifyFailed > 0:
		return results.StatusFailed, fmt.Sprintf("%d partitions' proofs did not verify", res.VerifyFailed)
	}
	for name, v := range res.Figures.FinalCounters {
		if v != 0 {
			return results.StatusFailed, fmt.Sprintf("counter %s ended at %d, not 0: the pipeline leaked", name, v)
		}
	}
	return results.StatusOK, ""
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

// next forgets the last repetition's messages before a serving child is
// asked for another.
func (s *streamReader) next() {
	s.t0, s.haveT0 = time.Time{}, false
	s.seriesNm, s.index, s.values, s.valuesT = nil, nil, nil, 0
	s.result, s.errMsg = nil, ""
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
	rec    *supervise.Recorder
	last   sample.ProcSample // the latest read of the kernel's peak

	// done, when set, is closed once the stream holds the repetition's
	// outcome (ended).
	done     chan struct{}
	doneOnce sync.Once
}

// ended returns a channel closed when the repetition has ended: the
// child's result or error has arrived, or the child has exited. A serving
// child lives on after its repetition, so its exit cannot mark the end.
func (c *childTarget) ended(exited <-chan struct{}) <-chan struct{} {
	c.done = make(chan struct{})
	go func() {
		select {
		case <-exited:
			c.finish()
		case <-c.done:
		}
	}()
	return c.done
}

func (c *childTarget) finish() { c.doneOnce.Do(func() { close(c.done) }) }

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
	if res, errMsg := c.stream.outcome(); c.done != nil && (res != nil || errMsg != "") {
		defer c.finish()
	}
	var g *supervise.GPUReading
	if c.r.GPU != nil {
		if gr, err := c.r.GPU.Sample(c.cmd.Process.Pid); err == nil {
			g = &gr
		}
	}
	values, valuesT := c.stream.latest()
	c.rec.Add(at, rss, g, values, valuesT)
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
