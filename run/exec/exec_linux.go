//go:build linux

package exec

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/provebench/provebench/internal/fsname"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/events"
	"github.com/provebench/provebench/run/sample"
	"github.com/provebench/provebench/run/supervise"
)

// Driver runs an external command under the supervisor (`provebench
// exec-shim`), samples its process tree, and turns its output lines and
// endpoints into counters and stage timings.
type Driver struct {
	// Exe is the provebench binary, started as `Exe exec-shim`.
	Exe string
	// OutDir is the run's output directory; each configuration gets a
	// folder beneath it (exec/<name>), CacheDir is the proving key cache
	// (both for the command's templates).
	OutDir, CacheDir string
	// GPU, if set, samples the GPUs.
	GPU supervise.GPUSampler
	// Log receives the setup commands as they start; nil for silence.
	Log io.Writer
}

// configDir is a configuration's own directory under the output
// directory, one per configuration (see fsname.Stem).
func (d *Driver) configDir(spec *Spec) string {
	return filepath.Join(d.OutDir, "exec", fsname.Stem(spec.Name))
}

func (d *Driver) data(spec *Spec, idx int, warmup bool) (*ExecData, error) {
	dir, err := filepath.Abs(d.configDir(spec))
	if err != nil {
		return nil, err
	}
	out, err := filepath.Abs(d.OutDir)
	if err != nil {
		return nil, err
	}
	vars := spec.Vars
	if vars == nil {
		vars = map[string]string{}
	}
	return &ExecData{
		Name: spec.Name, Repetition: idx + 1, Warmup: warmup, Vars: vars,
		Workload: spec.Workload, Pipeline: spec.Pipeline, Backend: spec.Backend,
		Provebench: d.Exe, Dir: dir, OutDir: out, CacheDir: d.CacheDir,
	}, nil
}

// maxProcesses bounds the processes a record lists (the largest peaks).
const maxProcesses = 32

// stderrTailLines is how much of a command's stderr a record keeps.
const stderrTailLines = 20

// execRun is one exec repetition in flight.
type execRun struct {
	spec   *Spec
	e      *ExecSpec
	sink   *events.Sink
	names  []string
	lineMu sync.Mutex // the timeline reader serves stdout and stderr
	tl     *events.Timeline
	rules  *events.Rules
	// rejected counts the lines refused before the readers saw them.
	rejected events.Rejections
	stderr   *supervise.TailBuffer

	started   time.Time // when the supervisor started the command
	haveStart bool
	done      *shimResult
	cgroup    bool
	cgroupMem bool
	streamMu  sync.Mutex
}

// Repetition runs one repetition of spec, numbered idx from 0, and
// returns its record; failures of every kind end up in its Status.
func (d *Driver) Repetition(ctx context.Context, spec *Spec, idx int, warmup bool, progress Progress) results.Repetition {
	// Numbered from 1, as the built-in pipeline's and the console's.
	rep := results.Repetition{Index: idx + 1, Warmup: warmup, StartedAt: time.Now().UTC()}
	fail := func(err error) results.Repetition {
		rep.Status, rep.Error = results.StatusFailed, err.Error()
		return rep
	}
	data, err := d.data(spec, idx, warmup)
	if err != nil {
		return fail(err)
	}
	e, err := spec.Exec.Render(data)
	if err != nil {
		return fail(fmt.Errorf("exec: %w", err))
	}
	if err := writeFiles(e.Files, data.Dir, data.OutDir); err != nil {
		return fail(err)
	}
	x, err := newExecRun(spec, e)
	if err != nil {
		return fail(err)
	}
	grace := e.StopGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	job, err := json.Marshal(shimJob{
		Command: e.Command, Env: execEnv(e.Env), Dir: e.Dir, Daemon: e.Daemon, Grace: grace,
		Cgroup: fmt.Sprintf("provebench-%d-%d", os.Getpid(), time.Now().UnixNano()), MemoryMax: spec.MemoryLimit,
		ParentPID: os.Getpid(),
	})
	if err != nil {
		return fail(err)
	}
	return d.supervise(ctx, spec, x, job, grace, rep, progress)
}

func newExecRun(spec *Spec, e *ExecSpec) (*execRun, error) {
	x := &execRun{spec: spec, e: e, sink: events.NewSink(), stderr: &supervise.TailBuffer{Max: stderrKeep}}
	if e.Timeline {
		x.tl = events.NewTimeline(x.sink)
	}
	if len(e.Rules) > 0 {
		rules := make([]events.Rule, len(e.Rules))
		for i, r := range e.Rules {
			re, err := regexp.Compile(r.Match)
			if err != nil {
				return nil, fmt.Errorf("exec.rules[%d].match: %w", i, err)
			}
			rules[i] = events.Rule{Pattern: re, Action: events.Action(r.Action), Counter: r.Counter, Stage: r.Stage, Scale: r.Scale}
		}
		x.rules = events.NewRules(x.sink, rules)
	}
	for _, m := range []map[string]string{statusCounters(e.Status), promCounters(e.Prometheus)} {
		for _, c := range slices.Sorted(mapKeys(m)) {
			x.sink.Declare(m[c])
		}
	}
	x.names = x.sink.Names()
	return x, nil
}

func statusCounters(s *StatusSpec) map[string]string {
	if s == nil {
		return nil
	}
	return s.Counters
}

func promCounters(p *PrometheusSpec) map[string]string {
	if p == nil {
		return nil
	}
	return p.Counters
}

// line reads one output line into the counters; it reports whether the
// line was a TIMELINE line (which the stderr tail leaves out).
func (x *execRun) line(line string, at time.Time) bool {
	x.lineMu.Lock()
	defer x.lineMu.Unlock()
	if x.tl != nil && x.tl.Line(line) {
		return true
	}
	if x.rules != nil {
		x.rules.Line(line, at)
	}
	return false
}

// maxLine bounds what is kept of one output line: a longer line is
// neither read nor kept whole, only counted: a line without a newline
// must not grow the runner by its size, or more.
const maxLine = 64 << 10

// readLines feeds r's lines to the counters, and to keep if set.
func (x *execRun) readLines(r io.Reader, keep io.Writer) {
	br := bufio.NewReaderSize(r, maxLine)
	long := false // within a line longer than maxLine
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if !long {
				long = true
				x.reject("a line longer than %d KiB", maxLine>>10)
				if keep != nil {
					_, _ = fmt.Fprintf(keep, "[provebench: a line longer than %d KiB left out]\n", maxLine>>10)
				}
			}
			continue
		case long:
			long = false // the end of the long line
		case len(line) > 0:
			timeline := x.line(strings.TrimRight(string(line), "\r\n"), time.Now())
			if keep != nil && !timeline {
				_, _ = keep.Write(line)
			}
		}
		if err != nil {
			return
		}
	}
}

// reject counts an output line the driver refused to read.
func (x *execRun) reject(format string, args ...any) {
	x.lineMu.Lock()
	defer x.lineMu.Unlock()
	if x.rejected.N == 0 {
		x.rejected.First = fmt.Sprintf(format, args...)
	}
	x.rejected.N++
}

// rejections sums what the line readers refused, the driver's own first.
func (x *execRun) rejections() events.Rejections {
	x.lineMu.Lock()
	defer x.lineMu.Unlock()
	all := x.rejected
	for _, r := range []events.Rejections{x.timelineRejected(), x.rulesRejected()} {
		if all.N == 0 {
			all.First = r.First
		}
		all.N += r.N
	}
	return all
}

func (x *execRun) timelineRejected() events.Rejections {
	if x.tl == nil {
		return events.Rejections{}
	}
	return x.tl.Rejected()
}

func (x *execRun) rulesRejected() events.Rejections {
	if x.rules == nil {
		return events.Rejections{}
	}
	return x.rules.Rejected()
}

// readStream reads the supervisor's messages.
func (x *execRun) readStream(r io.Reader) {
	dec := json.NewDecoder(r)
	for {
		var m shimMsg
		if err := dec.Decode(&m); err != nil {
			return
		}
		x.streamMu.Lock()
		switch m.Kind {
		case shimStarted:
			x.started, x.haveStart = time.Now(), true
			x.cgroup, x.cgroupMem = m.Cgroup, m.MemoryController
		case shimDone:
			x.done = m.Done
		}
		x.streamMu.Unlock()
	}
}

// pollers starts the endpoint pollers; they stop with ctx.
func (x *execRun) pollers(ctx context.Context, wg *sync.WaitGroup) {
	start := func(p events.Poller, interval time.Duration) {
		if interval <= 0 {
			interval = time.Second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			events.Every(ctx, p, interval)
		}()
	}
	if s := x.e.Status; s != nil {
		start(&events.JSONStatus{URL: s.URL, Pointers: s.Counters, Sink: x.sink}, s.Interval)
	}
	if p := x.e.Prometheus; p != nil {
		start(&events.Prometheus{URL: p.URL, Metrics: p.Counters, Sink: x.sink}, p.Interval)
	}
}

// supervise starts the supervisor and samples the tree until it has
// exited.
func (d *Driver) supervise(ctx context.Context, spec *Spec, x *execRun, job []byte, grace time.Duration, rep results.Repetition, progress Progress) results.Repetition {
	// The supervisor's parent-death signal goes when the thread that
	// started it exits: this goroutine keeps its thread until the
	// supervisor is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	spawned := time.Now()
	// The measured processes are the supervisor and the tree it reaps,
	// this process's children once they exit: the host's busy time
	// beyond them and this process is the neighbours'.
	hostLoad := sample.StartLoadOf(ctx, ownAndReapedCPU)
	sp, err := startShim(d.Exe, job,
		func(r io.Reader) { x.readLines(r, nil) },
		func(r io.Reader) { x.readLines(r, x.stderr) },
		x.readStream)
	if err != nil {
		rep.Status, rep.Error = results.StatusFailed, err.Error()
		return rep
	}
	pctx, stopPolling := context.WithCancel(ctx)
	var polls sync.WaitGroup
	x.pollers(pctx, &polls)

	s := d.sample(ctx, spec, x, sp.cmd, sp.exited, grace, spawned, progress)
	stopPolling()
	polls.Wait()
	sp.readers.Wait()
	rep = x.record(rep, s, sp.cmd.ProcessState, spawned)
	if h, err := hostLoad.Stop(); err == nil {
		rep.HostLoad = h
	}
	return rep
}

// ownAndReapedCPU is this process's CPU time and its reaped children's.
func ownAndReapedCPU() (float64, bool) {
	self, ok := sample.CPUSeconds(sample.Self)
	children, ok2 := sample.CPUSeconds(sample.Children)
	return self + children, ok && ok2
}

// sampled is what the sampling loop gathered.
type sampled struct {
	rec     *supervise.Recorder
	tree    *sample.Tree
	peakPSS uint64
	stopped supervise.Stopped
	end     time.Time
}

// treeTarget is the supervisor and its tree as the supervising loop sees
// them: samples are of the tree below the supervisor, and stopping asks
// the supervisor (SIGTERM), which ends the tree itself.
type treeTarget struct {
	d     *Driver
	x     *execRun
	cmd   *osexec.Cmd
	s     *sampled
	grace time.Duration
}

func (t *treeTarget) Sample(at time.Time, detail bool) (uint64, bool) {
	ts := t.s.tree.Sample(detail)
	t.s.peakPSS = max(t.s.peakPSS, ts.PSSBytes)
	var g *supervise.GPUReading
	if t.d.GPU != nil {
		g = treeGPU(t.d.GPU, ts.PIDs)
	}
	t.s.rec.Add(at, ts.RSSBytes, g, t.x.sink.Values(t.x.names), 0)
	return ts.RSSBytes, true
}

// Stop asks the supervisor to end the tree: SIGTERM, its grace, SIGKILL.
// It gets twice the grace (the daemon's and the command's) and a margin
// before it is killed itself.
func (t *treeTarget) Stop(supervise.Reason) time.Duration {
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	return 2*t.grace + 5*time.Second
}

// Kill: the supervisor did not end in time: kill it and what it left.
func (t *treeTarget) Kill() {
	pids := t.s.tree.Descendants()
	_ = t.cmd.Process.Kill()
	signalAll(pids, syscall.SIGKILL)
}

func (d *Driver) sample(ctx context.Context, spec *Spec, x *execRun, cmd *osexec.Cmd, exited <-chan struct{}, grace time.Duration, spawned time.Time, progress Progress) *sampled {
	interval := spec.SampleInterval
	if interval <= 0 {
		interval = supervise.DefaultInterval
	}
	s := &sampled{rec: supervise.NewRecorder(interval, d.GPU != nil), tree: sample.NewTree(cmd.Process.Pid)}
	t := &treeTarget{d: d, x: x, cmd: cmd, s: s, grace: grace}
	s.stopped, s.end = supervise.Watch(ctx, exited, t, supervise.Config{
		Interval: interval, DetailInterval: detailInterval, Timeout: spec.Timeout, MemoryLimit: spec.MemoryLimit,
		What: "RSS of the process tree",
		Progress: func(at time.Time, rss uint64) {
			done := x.sink.Finals()[events.CounterPartitionsDone]
			progress.Tick(spec, at.Sub(spawned), int(done), rss)
		},
	})
	return s
}

// treeGPU sums the GPU memory of every process of the tree (absent when
// NVML sees none of them); device memory and utilisation are the
// devices', read once.
func treeGPU(g supervise.GPUSampler, pids []int) *supervise.GPUReading {
	var sum supervise.GPUReading
	var proc uint64
	ok, known := false, false
	for _, pid := range pids {
		r, err := g.Sample(pid)
		if err != nil {
			continue
		}
		if !ok {
			sum.DeviceBytes, sum.Utilization = r.DeviceBytes, r.Utilization
		}
		ok = true
		if r.ProcessBytes != nil {
			proc += *r.ProcessBytes
			known = true
		}
	}
	if !ok {
		return nil
	}
	if known {
		sum.ProcessBytes = &proc
	}
	return &sum
}

// record turns the repetition's figures into its record.
func (x *execRun) record(rep results.Repetition, s *sampled, ps *os.ProcessState, spawned time.Time) results.Repetition {
	x.streamMu.Lock()
	res, started, haveStart := x.done, x.started, x.haveStart
	x.streamMu.Unlock()
	if res != nil {
		rep.Adopt(res.Figures) // the supervisor's figures, as it measured them
	}
	rep.ProcessSeconds = s.end.Sub(spawned).Seconds()
	t0 := started
	if !haveStart {
		t0 = s.end
	}
	rep.Series = s.rec.Series(t0, x.names)
	rep.PeakRSSSampledBytes = s.rec.PeakRSS
	rep.PeakPSSBytes = s.peakPSS
	rep.PeakGPUMemoryBytes, rep.PeakGPUDeviceMemoryBytes, rep.MeanGPUUtilization = s.rec.GPUPeaks()
	if res != nil {
		for _, p := range res.Reaped {
			s.tree.Reaped(p.PID, p.MaxRSS)
		}
	}
	peaks := s.tree.Peaks()
	for _, p := range peaks[:min(len(peaks), maxProcesses)] {
		rep.Processes = append(rep.Processes, results.ProcessPeak{PID: p.PID, Name: p.Name, PeakRSSBytes: p.PeakRSSBytes})
	}
	rep.PeakRSSBytes, rep.PeakRSSSource = s.rec.PeakRSS, results.PeakFromTree
	if len(peaks) > 0 {
		rep.PeakRSSBytes = max(rep.PeakRSSBytes, peaks[0].PeakRSSBytes)
	}
	if res != nil && res.CgroupPeak > 0 {
		rep.PeakRSSBytes, rep.PeakRSSSource = res.CgroupPeak, results.PeakFromCgroup
	}
	rep.StderrTail = lastLines(x.stderr.String(), stderrTailLines)
	if rj := x.rejections(); rj.N > 0 {
		rep.RejectedLines, rep.RejectedLine = rj.N, rj.First
	}
	x.counters(&rep)
	x.status(&rep, s, res, ps)
	return rep
}

// counters fills counters, stages and throughput from the events, or from
// the wall time and the units the scenario declares.
func (x *execRun) counters(rep *results.Repetition) {
	rep.PeakCounters = x.sink.Peaks()
	if x.tl != nil {
		finals := x.sink.Finals()
		rep.FinalCounters = map[string]int64{}
		for _, c := range []string{events.CounterSynthesizing, events.CounterQueueDepth, events.CounterInChannel, events.CounterOnGPU} {
			rep.FinalCounters[c] = finals[c]
		}
		rep.Partitions = int(finals[events.CounterPartitionsDone])
	}
	if rep.Partitions == 0 {
		rep.Partitions = x.e.Partitions
	}
	if x.tl != nil {
		// Throughput from the events: their span, not the command's life
		// (which includes its start-up, as the built-in pipeline's wall
		// leaves out key loading).
		if span, ok := x.tl.Span(); ok && span > 0 && rep.Partitions > 0 {
			rep.WallSeconds = span.Seconds()
		}
	}
	rep.Proofs = x.e.Proofs
	rep.Derive()
	if st := x.sink.Stages(); len(st) > 0 {
		rep.Stages = make(map[string]results.StageSummary, len(st))
		for name, ds := range st {
			rep.Stages[name] = summarize(ds)
		}
	}
}

func (x *execRun) status(rep *results.Repetition, s *sampled, res *shimResult, ps *os.ProcessState) {
	tail := ""
	if rep.StderrTail != "" {
		tail = ": " + lastLines(rep.StderrTail, 3)
	}
	// Every figure of the tree's peak is its own memory (the supervisor's
	// is left out), and each is a lower bound of the tree's true peak, so
	// any of them past the limit means the tree passed it.
	overErr := supervise.OverLimit(x.spec.MemoryLimit, supervise.Peak{Bytes: rep.PeakRSSBytes, Source: rep.PeakRSSSource, Exact: true})
	switch {
	case s.stopped.Status != "":
		rep.Status, rep.Error = s.stopped.Status, s.stopped.Err.Error()
	case res != nil && res.OOMKills > 0:
		rep.Status = results.StatusMemoryLimit
		rep.Error = fmt.Sprintf("the kernel killed %d processes for passing the cgroup's memory.max", res.OOMKills)
	case overErr != nil:
		rep.Status, rep.Error = results.StatusMemoryLimit, overErr.Error()
	case res == nil:
		rep.Status = results.StatusCrashed
		rep.Error = fmt.Sprintf("exec supervisor %s without an account%s", supervise.DescribeExit(ps), tail)
	case res.Error != "":
		rep.Status, rep.Error = results.StatusFailed, "exec: "+res.Error+tail
	case res.Figures.ExitSignal != "":
		rep.Status = results.StatusCrashed
		rep.Error = "command killed by signal " + res.Figures.ExitSignal + tail
	case res.exitCode() != 0:
		rep.Status = results.StatusFailed
		rep.Error = "command exited with status " + strconv.Itoa(res.exitCode()) + tail
	default:
		rep.Status = results.StatusOK
		// The same balance check as the built-in pipeline's: every
		// partition the events started has ended.
		for _, name := range slices.Sorted(maps.Keys(rep.FinalCounters)) {
			if v := rep.FinalCounters[name]; v != 0 {
				rep.Status = results.StatusFailed
				rep.Error = fmt.Sprintf("counter %s ended at %d, not 0: the command's events do not balance", name, v)
				break
			}
		}
	}
}
