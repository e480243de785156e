//go:build linux

package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	osexec "os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/sample"
)

// The exec driver's supervisor (`provebench exec-shim`) is the one process
// between the runner and an external prover. It makes itself a child
// subreaper, so that every process of the repetition that its parent
// abandons (a daemon that double-forks, a worker in a session of its own)
// is re-parented to it rather than to init; it starts the daemon and the
// command (into a fresh cgroup where the host delegates one), reaps every
// process with wait4 and keeps each one's ru_maxrss, and when the command
// exits or the runner asks it to stop (SIGTERM), it terminates whatever is
// left: SIGTERM, a grace period, then SIGKILL until no child remains. Only
// then does it report and exit, so nothing of a repetition outlives it.
// Its parent-death signal is SIGTERM too, not SIGKILL: a runner killed
// with SIGKILL leaves the supervisor to end the tree (a SIGKILLed
// supervisor would take only its own children along, and the processes
// re-parented to it would go to init).

// shimJob is what the runner asks of the supervisor, as JSON on its stdin.
type shimJob struct {
	Command []string      `json:"command"`
	Env     []string      `json:"env"`
	Dir     string        `json:"dir,omitempty"`
	Daemon  *DaemonSpec   `json:"daemon,omitempty"`
	Grace   time.Duration `json:"grace"`
	// Cgroup names the group to make for the tree ("" for none);
	// MemoryMax is its memory.max (0 for none).
	Cgroup    string `json:"cgroup,omitempty"`
	MemoryMax int64  `json:"memory_max,omitempty"`
	// ParentPID is the runner's pid: a supervisor whose parent is
	// already another starts nothing (its parent-death signal was sent
	// before it could catch it).
	ParentPID int `json:"parent_pid,omitempty"`
}

// Messages of the supervisor on its stream (file descriptor 3).
const (
	shimStarted = "started" // the command starts now (after the daemon is ready)
	shimDone    = "done"    // everything has exited; carries the account
)

type shimMsg struct {
	Kind string `json:"kind"`
	// Cgroup tells whether the tree ran in a group of its own, and
	// MemoryController whether the kernel kept its memory figures.
	Cgroup           bool        `json:"cgroup,omitempty"`
	MemoryController bool        `json:"memory_controller,omitempty"`
	Done             *shimResult `json:"done,omitempty"`
}

// shimResult is the supervisor's account. Figures is the repetition's
// record as far as the supervisor measured it (results.Repetition, the one
// measurement contract: the command's exit, its wall time, and what its
// probes read of the reaped tree), sent as is; the other fields are what
// the runner needs to judge the repetition and weigh the tree's peaks.
type shimResult struct {
	Figures results.Repetition `json:"figures"`
	// Error is set when the command could not run at all.
	Error string `json:"error,omitempty"`
	// Stopped is set when the runner asked the supervisor to stop.
	Stopped bool `json:"stopped,omitempty"`
	// Reaped lists every process the supervisor waited for, with wait4's
	// ru_maxrss (which includes its own waited-for descendants).
	Reaped     []reapedProc `json:"reaped,omitempty"`
	CgroupPeak uint64       `json:"cgroup_peak,omitempty"`
	OOMKills   int          `json:"oom_kills,omitempty"`
}

// exitCode is the command's exit status, -1 when a signal ended it or it
// never ran.
func (r *shimResult) exitCode() int {
	if r.Figures.ExitCode == nil {
		return -1
	}
	return *r.Figures.ExitCode
}

type reapedProc struct {
	PID int `json:"pid"`
	// MaxRSS is 0 where wait4's figure would only be the supervisor's.
	MaxRSS uint64 `json:"max_rss"`
}

// ShimMain runs the exec driver's supervisor: the job from in, messages to
// stream.
func ShimMain(ctx context.Context, in io.Reader, stream io.Writer) error {
	// The runner reads its pipes; once it is gone a write there must
	// fail, not end the supervisor (SIGPIPE) before it has ended the
	// tree.
	signal.Ignore(syscall.SIGPIPE)
	var job shimJob
	if err := json.NewDecoder(in).Decode(&job); err != nil {
		return fmt.Errorf("exec-shim: read job: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("exec-shim: child subreaper: %w", err)
	}
	enc := json.NewEncoder(stream)
	s := &shim{job: job, term: make(chan os.Signal, 1), probes: sample.ReapedTree()}
	s.probes.Begin()
	// SIGTERM is both the runner's request to stop and the parent-death
	// signal: either way the tree is ended before the supervisor exits.
	signal.Notify(s.term, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(s.term)
	if job.ParentPID != 0 && os.Getppid() != job.ParentPID {
		return fmt.Errorf("exec-shim: the runner (pid %d) is gone", job.ParentPID)
	}
	if job.Cgroup != "" {
		if cg, err := sample.NewCgroup(job.Cgroup, job.MemoryMax); err == nil {
			s.cg = cg
		}
	}
	res := s.run(ctx, func() {
		_ = enc.Encode(shimMsg{Kind: shimStarted, Cgroup: s.cg != nil, MemoryController: s.cg != nil && s.cg.HasMemory()})
	})
	if s.cg != nil {
		if peak, ok := s.cg.Peak(); ok {
			res.CgroupPeak = peak
		}
		res.OOMKills = s.cg.OOMKills()
		_ = s.cg.Close()
	}
	s.probes.End(&res.Figures)
	return enc.Encode(shimMsg{Kind: shimDone, Done: res})
}

type shim struct {
	job    shimJob
	probes sample.Probes // of the tree, over its life
	cg     *sample.Cgroup
	term   chan os.Signal
	reaped []reapedProc
	status map[int]unix.WaitStatus
	// started are the processes the supervisor started itself: their
	// ru_maxrss includes the supervisor's own peak (they were forked
	// from it), which is not the prover's memory.
	started map[int]bool
}

// reapTick is how often the supervisor collects exited processes.
const reapTick = 2 * time.Millisecond

func (s *shim) run(ctx context.Context, started func()) *shimResult {
	res := &shimResult{}
	res.Figures.ExitCode = new(int)
	*res.Figures.ExitCode = -1
	defer func() { res.Reaped = s.reaped }()
	s.status = make(map[int]unix.WaitStatus)
	if d := s.job.Daemon; d != nil {
		pid, err := s.start(d.Command)
		if err != nil {
			res.Error = fmt.Sprintf("daemon: %v", err)
			return res
		}
		if err := s.awaitDaemon(ctx, pid, d); err != nil {
			res.Error = fmt.Sprintf("daemon: %v", err)
			s.stopAll()
			return res
		}
	}
	started()
	t0 := time.Now()
	pid, err := s.start(s.job.Command)
	if err != nil {
		res.Error = err.Error()
		s.stopAll()
		return res
	}
	tick := time.NewTicker(reapTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done(): // main's handler may have taken the signal before s.term listened
			res.Stopped = true
			res.Figures.WallSeconds = time.Since(t0).Seconds()
			s.stopAll()
			s.fillStatus(res, pid)
			return res
		case <-s.term:
			res.Stopped = true
			res.Figures.WallSeconds = time.Since(t0).Seconds()
			s.stopAll()
			s.fillStatus(res, pid)
			return res
		case <-tick.C:
			s.reap()
			if _, done := s.status[pid]; done {
				res.Figures.WallSeconds = time.Since(t0).Seconds()
				s.fillStatus(res, pid)
				s.stopAll() // the daemon, and whatever the command left behind
				return res
			}
		}
	}
}

func (s *shim) fillStatus(res *shimResult, pid int) {
	ws, ok := s.status[pid]
	switch {
	case !ok:
	case ws.Signaled():
		res.Figures.ExitSignal = ws.Signal().String()
	default:
		*res.Figures.ExitCode = ws.ExitStatus()
	}
}

// start starts argv with the job's environment, in the cgroup if there is
// one; the process gets SIGKILL should the supervisor die first.
func (s *shim) start(argv []string) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("empty command")
	}
	path, err := osexec.LookPath(argv[0])
	if err != nil {
		return 0, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if s.cg != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, s.cg.FD()
	}
	p, err := os.StartProcess(path, argv, &os.ProcAttr{
		Dir: s.job.Dir, Env: s.job.Env, Files: []*os.File{null, os.Stdout, os.Stderr}, Sys: attr,
	})
	if err != nil {
		return 0, err
	}
	pid := p.Pid
	_ = p.Release() // reaped below, by wait4(-1)
	if s.started == nil {
		s.started = make(map[int]bool)
	}
	s.started[pid] = true
	return pid, nil
}

// awaitDaemon waits until the daemon answers on its ready URL, or for its
// ready delay.
func (s *shim) awaitDaemon(ctx context.Context, pid int, d *DaemonSpec) error {
	timeout := d.ReadyTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	deadline := time.Now().Add(timeout)
	delay := time.After(d.ReadyDelay)
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.term:
			return errors.New("stopped before it was ready")
		case <-ctx.Done():
			return ctx.Err()
		case <-delay:
			if d.ReadyURL == "" {
				return nil
			}
			delay = nil
		case <-tick.C:
		}
		s.reap()
		if ws, done := s.status[pid]; done {
			return fmt.Errorf("exited before it was ready (%s)", describeWait(ws))
		}
		if d.ReadyURL != "" && delay == nil {
			if resp, err := client.Get(d.ReadyURL); err == nil {
				resp.Body.Close()
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s", timeout)
		}
	}
}

// reap collects every exited child without blocking.
func (s *shim) reap() (none bool) {
	for {
		var ws unix.WaitStatus
		var ru unix.Rusage
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, &ru)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return true // ECHILD: no children left
		case pid == 0:
			return false
		}
		s.status[pid] = ws
		maxRSS := uint64(ru.Maxrss) << 10
		if self := sample.SelfPeak(); s.started[pid] && maxRSS <= self+self/8 {
			// The supervisor's own peak, folded in at the fork: the
			// process's own is unknown (at most this), so it is left
			// out rather than counted as the prover's (a `true` would
			// read as the supervisor's size). The margin covers the
			// kernel's per-CPU RSS counters, whose sums at the fork and at
			// this read can differ (rarely, and by a little).
			maxRSS = 0
		}
		s.reaped = append(s.reaped, reapedProc{PID: pid, MaxRSS: maxRSS})
	}
}

// stopAll ends every remaining process: SIGTERM, up to the grace period,
// then SIGKILL (and the cgroup's kill) until none is left. It reports
// whether there was anything to stop.
func (s *shim) stopAll() bool {
	if s.reap() {
		return false
	}
	self := sample.NewTree(os.Getpid())
	signalAll(self.Descendants(), unix.SIGTERM)
	grace := time.Now().Add(s.job.Grace)
	for time.Now().Before(grace) {
		time.Sleep(reapTick)
		if s.reap() {
			return true
		}
	}
	for !s.reap() {
		if s.cg != nil {
			_ = s.cg.Kill()
		}
		signalAll(self.Descendants(), unix.SIGKILL)
		time.Sleep(reapTick)
	}
	return true
}

func signalAll(pids []int, sig unix.Signal) {
	for _, pid := range pids {
		_ = unix.Kill(pid, sig)
	}
}

func describeWait(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "killed by signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}
