//go:build linux

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/provebench/provebench/bench/events"
	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/bench/sample"
)

// execDriver runs an external command under the supervisor (`provebench
// exec-shim`), samples its process tree, and turns its output lines and
// endpoints into counters and stage timings.
type execDriver struct {
	r *Runner
}

// configDir is a configuration's own directory under the output directory.
func (d *execDriver) configDir(spec *Spec) string {
	name := strings.NewReplacer("/", "_", "=", "-").Replace(spec.Name)
	return filepath.Join(d.r.OutDir, "exec", name)
}

func (d *execDriver) data(spec *Spec, idx int, warmup bool) (*ExecData, error) {
	dir, err := filepath.Abs(d.configDir(spec))
	if err != nil {
		return nil, err
	}
	out, err := filepath.Abs(d.r.OutDir)
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
		Provebench: d.r.Exe, Dir: dir, OutDir: out, CacheDir: d.r.CacheDir,
	}, nil
}

// prepare makes the configuration's directory and runs its setup commands.
func (d *execDriver) prepare(ctx context.Context, spec *Spec, sc *results.Scenario) error {
	data, err := d.data(spec, 0, false)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(data.Dir, 0o755); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	e, err := spec.Exec.render(data)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if err := writeFiles(e.Files, data.Dir); err != nil {
		return err
	}
	for i, argv := range e.Setup {
		if len(argv) == 0 {
			continue
		}
		if d.r.Log != nil {
			fmt.Fprintf(d.r.Log, "%s: setup: %s\n", spec.Name, strings.Join(argv, " "))
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = e.Dir, execEnv(e.Env)
		out := &tailBuffer{max: stderrKeep}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("exec.setup[%d] (%s): %w: %s", i, strings.Join(argv, " "), err, lastLines(out.String(), 10))
		}
	}
	return nil
}

func writeFiles(files []ExecFile, dir string) error {
	for _, f := range files {
		path := f.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("exec.files: %w", err)
		}
		if err := os.WriteFile(path, []byte(f.Content), 0o644); err != nil {
			return fmt.Errorf("exec.files: %w", err)
		}
	}
	return nil
}

func execEnv(extra map[string]string) []string {
	env := os.Environ()
	for _, k := range slices.Sorted(mapKeys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// lastLines keeps the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
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
	stderr *tailBuffer

	started   time.Time // when the supervisor started the command
	haveStart bool
	done      *shimResult
	cgroup    bool
	cgroupMem bool
	streamMu  sync.Mutex
}

func (d *execDriver) repetition(ctx context.Context, spec *Spec, idx int, warmup bool, progress Progress) results.Repetition {
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
	e, err := spec.Exec.render(data)
	if err != nil {
		return fail(fmt.Errorf("exec: %w", err))
	}
	if err := writeFiles(e.Files, data.Dir); err != nil {
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
	})
	if err != nil {
		return fail(err)
	}
	return d.supervise(ctx, spec, x, job, grace, rep, progress)
}

func newExecRun(spec *Spec, e *ExecSpec) (*execRun, error) {
	x := &execRun{spec: spec, e: e, sink: events.NewSink(), stderr: &tailBuffer{max: stderrKeep}}
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

// readLines feeds r's lines to the counters, and to keep if set.
func (x *execRun) readLines(r io.Reader, keep io.Writer) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			timeline := x.line(strings.TrimRight(line, "\r\n"), time.Now())
			if keep != nil && !timeline {
				_, _ = keep.Write([]byte(line))
			}
		}
		if err != nil {
			return
		}
	}
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

// pipes makes the pipes the supervisor and its processes write into.
func pipes(n int) (r, w []*os.File, err error) {
	for range n {
		pr, pw, err := os.Pipe()
		if err != nil {
			closeAll(r)
			closeAll(w)
			return nil, nil, err
		}
		r, w = append(r, pr), append(w, pw)
	}
	return r, w, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// supervise starts the supervisor and samples the tree until it has
// exited.
func (d *execDriver) supervise(ctx context.Context, spec *Spec, x *execRun, job []byte, grace time.Duration, rep results.Repetition, progress Progress) results.Repetition {
	pr, pw, err := pipes(3) // stdout, stderr, stream
	if err != nil {
		rep.Status, rep.Error = results.StatusFailed, err.Error()
		return rep
	}
	defer closeAll(pr)
	cmd := exec.Command(d.r.Exe, "exec-shim")
	cmd.Stdin = bytes.NewReader(job)
	cmd.Stdout, cmd.Stderr = pw[0], pw[1]
	cmd.ExtraFiles = []*os.File{pw[2]}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	spawned := time.Now()
	err = cmd.Start()
	closeAll(pw)
	if err != nil {
		rep.Status, rep.Error = results.StatusFailed, fmt.Sprintf("start exec supervisor: %v", err)
		return rep
	}
	var readers sync.WaitGroup
	readers.Add(3)
	go func() { defer readers.Done(); x.readLines(pr[0], nil) }()
	go func() { defer readers.Done(); x.readLines(pr[1], x.stderr) }()
	go func() { defer readers.Done(); x.readStream(pr[2]) }()
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the supervisor's account comes over its stream
		close(exited)
	}()
	pctx, stopPolling := context.WithCancel(ctx)
	var polls sync.WaitGroup
	x.pollers(pctx, &polls)

	s := d.sample(ctx, spec, x, cmd, exited, grace, spawned, progress)
	stopPolling()
	polls.Wait()
	readers.Wait()
	return x.record(rep, s, cmd.ProcessState, spawned)
}

// sampled is what the sampling loop gathered.
type sampled struct {
	rec        *recorder
	tree       *sample.Tree
	peakPSS    uint64
	stopStatus results.Status
	stopErr    error
	end        time.Time
}

func (d *execDriver) sample(ctx context.Context, spec *Spec, x *execRun, cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration, spawned time.Time, progress Progress) *sampled {
	interval := spec.SampleInterval
	if interval <= 0 {
		interval = 10 * time.Millisecond
	}
	s := &sampled{rec: newRecorder(interval, d.r.GPU != nil), tree: sample.NewTree(cmd.Process.Pid)}
	var deadline, killAt <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	stop := func(status results.Status, err error) {
		if s.stopStatus != "" {
			return
		}
		s.stopStatus, s.stopErr = status, err
		_ = cmd.Process.Signal(syscall.SIGTERM) // the supervisor ends the tree
		killAt = time.After(2*grace + 5*time.Second)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	detailEvery := max(1, int(hwmInterval/interval))
	interrupted := ctx.Done()
	var lastProgress time.Time
	for ticks := 0; ; ticks++ {
		select {
		case <-exited:
			s.end = time.Now()
			return s
		case <-interrupted:
			interrupted = nil
			stop(results.StatusCancelled, ctx.Err())
		case <-deadline:
			stop(results.StatusTimeout, fmt.Errorf("ran past the scenario's timeout of %s", spec.Timeout))
		case <-killAt:
			// The supervisor did not end in time: kill it and what it left.
			pids := s.tree.Descendants()
			_ = cmd.Process.Kill()
			signalAll(pids, syscall.SIGKILL)
		case now := <-tick.C:
			ts := s.tree.Sample(ticks%detailEvery == 0)
			s.peakPSS = max(s.peakPSS, ts.PSSBytes)
			var g *GPUReading
			if d.r.GPU != nil {
				g = treeGPU(d.r.GPU, ts.PIDs)
			}
			s.rec.add(now, ts.RSSBytes, g, x.sink.Values(x.names), 0)
			if spec.MemoryLimit > 0 && ts.RSSBytes > uint64(spec.MemoryLimit) {
				stop(results.StatusMemoryLimit, fmt.Errorf("RSS of the process tree, %d bytes, passed the scenario's memory limit of %d bytes", ts.RSSBytes, spec.MemoryLimit))
			}
			if now.Sub(lastProgress) >= 200*time.Millisecond {
				lastProgress = now
				done := x.sink.Finals()[events.CounterPartitionsDone]
				progress.Tick(spec, now.Sub(spawned), int(done), ts.RSSBytes)
			}
		}
	}
}

// treeGPU sums the GPU memory of every process of the tree (absent when
// NVML sees none of them); device memory and utilisation are the
// devices', read once.
func treeGPU(g GPUSampler, pids []int) *GPUReading {
	var sum GPUReading
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
	rep.ProcessSeconds = s.end.Sub(spawned).Seconds()
	t0 := started
	if !haveStart {
		t0 = s.end
	}
	rep.Series = s.rec.series(t0, x.names)
	rep.PeakRSSSampledBytes = s.rec.peakRSS
	rep.PeakPSSBytes = s.peakPSS
	rep.PeakGPUMemoryBytes, rep.PeakGPUDeviceMemoryBytes, rep.MeanGPUUtilization = s.rec.gpuPeaks()
	if res != nil {
		for _, p := range res.Reaped {
			s.tree.Reaped(p.PID, p.MaxRSS)
		}
		rep.CPUUserSeconds, rep.CPUSystemSeconds = res.UserSeconds, res.SysSeconds
		rep.WallSeconds = res.WallSeconds
		code := res.ExitCode
		rep.ExitCode, rep.ExitSignal = &code, res.Signal
	}
	peaks := s.tree.Peaks()
	for _, p := range peaks[:min(len(peaks), maxProcesses)] {
		rep.Processes = append(rep.Processes, results.ProcessPeak{PID: p.PID, Name: p.Name, PeakRSSBytes: p.PeakRSSBytes})
	}
	rep.PeakRSSBytes, rep.PeakRSSSource = s.rec.peakRSS, results.PeakFromTree
	if len(peaks) > 0 {
		rep.PeakRSSBytes = max(rep.PeakRSSBytes, peaks[0].PeakRSSBytes)
	}
	if res != nil && res.CgroupPeak > 0 {
		rep.PeakRSSBytes, rep.PeakRSSSource = res.CgroupPeak, results.PeakFromCgroup
	}
	rep.StderrTail = lastLines(x.stderr.String(), stderrTailLines)
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
	if rep.WallSeconds > 0 {
		rep.PartitionsPerSecond = float64(rep.Partitions) / rep.WallSeconds
		if rep.Proofs > 0 {
			rep.SecondsPerProof = rep.WallSeconds / float64(rep.Proofs)
		}
	}
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
	switch {
	case s.stopStatus != "":
		rep.Status, rep.Error = s.stopStatus, s.stopErr.Error()
	case res == nil:
		rep.Status = results.StatusCrashed
		rep.Error = fmt.Sprintf("exec supervisor %s without an account%s", describeExit(ps), tail)
	case res.Error != "":
		rep.Status, rep.Error = results.StatusFailed, "exec: "+res.Error+tail
	case res.OOMKills > 0:
		rep.Status = results.StatusMemoryLimit
		rep.Error = fmt.Sprintf("the kernel killed %d processes for passing the cgroup's memory.max", res.OOMKills)
	case res.Signal != "":
		rep.Status = results.StatusCrashed
		rep.Error = "command killed by signal " + res.Signal + tail
	case res.ExitCode != 0:
		rep.Status = results.StatusFailed
		rep.Error = "command exited with status " + strconv.Itoa(res.ExitCode) + tail
	default:
		rep.Status = results.StatusOK
	}
}

// summarize summarises a stage's durations.
func summarize(ds []time.Duration) results.StageSummary {
	if len(ds) == 0 {
		return results.StageSummary{}
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var total time.Duration
	for _, d := range s {
		total += d
	}
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return results.StageSummary{
		Count: len(s), TotalSeconds: total.Seconds(), MeanSeconds: total.Seconds() / float64(len(s)),
		P50Seconds: q(0.5).Seconds(), P90Seconds: q(0.9).Seconds(), MaxSeconds: s[len(s)-1].Seconds(),
	}
}
