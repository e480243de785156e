package ab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/provebench/provebench/results"
)

// A warm side is a long-lived `provebench run --serve` of the side's own
// binary for one configuration: it sets its prover up once, in a worker
// that serves Runner.WorkerReps repetitions or more (retired) before a
// fresh one replaces it, and runs one repetition per request (run's
// Serving protocol). The side's binary still runs its own code and writes its own
// document; ab only asks for repetitions in ABBA order and reads back each
// reply's record. A binary too old to serve (its `run --help` has no
// --serve) runs a `provebench run` per repetition as before.

// serveRequest and serveReply are run's ServeRequest and ServeReply, as
// the side's binary writes them: ab does not link the runner.
type serveRequest struct {
	Index  int  `json:"index"`
	Warmup bool `json:"warmup,omitempty"`
}

type serveReply struct {
	Index      int                 `json:"index"`
	Repetition *results.Repetition `json:"repetition,omitempty"`
	Error      string              `json:"error,omitempty"`
}

// canServe reports whether a side's binary serves repetitions on request.
func canServe(ctx context.Context, exe string) bool {
	out, err := exec.CommandContext(ctx, exe, "run", "--help").CombinedOutput()
	return err == nil && regexp.MustCompile(`(?m)^\s+--serve\b`).Match(out)
}

// server is one side's serving process for one configuration.
type server struct {
	config  string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies *json.Decoder
	dir     string
	output  *bytes.Buffer // its standard error, for a crash's message
	exited  chan struct{}
	// record is the document's run and scenario record, read once the
	// first repetition is in (version, host, the scenario's spec).
	record *results.Run
	// served counts the repetitions it answered; setup and windows add up
	// its setup and its repetitions' measured windows, in seconds.
	served         int
	setup, windows float64
}

// Replacing a worker every Runner.WorkerReps repetitions samples what a
// process draws at its start several times in a verdict; but where the
// setup is long against the window (a GPU-bound configuration whose
// setup is several of its windows: docs/ci-workflow.md, "How ab
// measures"), that sampling costs more device time than the repetitions
// themselves. A worker therefore serves on past WorkerReps until the
// windows it served add up to setupWindows times its setup, up to
// maxStretch times WorkerReps. At 8, the replacements' setups are at most
// a ninth of a side's time, which leaves room under the 1.5x a pair may
// cost for each repetition's hand-over (docs/ci-workflow.md, "What a
// verdict costs", has the GPU figures that chose 8 over 4).
const (
	setupWindows = 8
	maxStretch   = 4
)

// MaxWorkerReps bounds Runner.WorkerReps: a worker asked to serve more
// is never replaced in any run that ends, and maxStretch times more
// must stay a count (2^62 wrapped to --reuse-process 0).
const MaxWorkerReps = 1 << 20

// retired reports whether the server has served its share: reps
// repetitions at least, and enough windows to have paid for its setup.
func (sv *server) retired(reps int) bool {
	if sv.served < reps {
		return false
	}
	return sv.windows >= setupWindows*sv.setup || sv.served >= maxStretch*reps
}

// account adds an answered repetition to the server's counts.
func (sv *server) account(rep *results.Repetition) {
	sv.served++
	sv.windows += rep.WallSeconds
	if rep.SetupSeconds != nil {
		sv.setup += *rep.SetupSeconds
	}
}

// startServer starts the side's server for a configuration.
func (r *Runner) startServer(ctx context.Context, s *side, config string) (*server, error) {
	dir, err := os.MkdirTemp(s.dir, ".serve-")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	if r.WorkerReps > MaxWorkerReps {
		return nil, fmt.Errorf("%w: %d repetitions per worker, more than %d", ErrBadInput, r.WorkerReps, MaxWorkerReps)
	}
	args := append([]string{"run"}, s.Files...)
	args = append(args, "--filter", "^"+regexp.QuoteMeta(config)+"$", "--serve",
		"--reuse-process", strconv.Itoa(maxStretch*r.WorkerReps), "--warmups", "0", "--repeat", "1",
		"--no-report", "--cache", r.CacheDir, "-o", dir)
	cmd := exec.Command(s.Exe, args...)
	cmd.Env = append(os.Environ(), NoCalibrationStoreEnv+"=1")
	// ab killed outright (a second signal) must not leave the server
	// and its worker behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sv := &server{config: config, cmd: cmd, dir: dir, output: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = &capped{b: sv.output, max: 64 << 10}
	if sv.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s side: start %s: %w", s.Name, s.Exe, err)
	}
	go func() {
		_ = cmd.Wait()
		close(sv.exited)
	}()
	sv.replies = json.NewDecoder(bufio.NewReader(out))
	r.progressf("%s: %s side serves from a warm process (pid %d): %d repetitions per worker, up to %d while their windows add up to less than %dx its setup",
		config, s.Name, cmd.Process.Pid, r.WorkerReps, maxStretch*r.WorkerReps, setupWindows)
	return sv, nil
}

// serveOne asks a side's server for one repetition, starting the server
// (for this configuration) first if need be. A server that dies is
// recorded as a crashed repetition and replaced at the next request.
func (r *Runner) serveOne(ctx context.Context, s *side, config string, index int, warm bool) (results.Repetition, *results.Run, error) {
	if s.server != nil && (s.server.config != config || s.server.retired(r.WorkerReps)) {
		s.closeServer()
	}
	if s.server == nil {
		sv, err := r.startServer(ctx, s, config)
		if err != nil {
			return results.Repetition{}, nil, err
		}
		s.server = sv
	}
	sv := s.server
	req, _ := json.Marshal(serveRequest{Index: index, Warmup: warm})
	var reply serveReply
	_, werr := sv.stdin.Write(append(req, '\n'))
	var rerr error
	if werr == nil {
		rerr = sv.reply(ctx, &reply, sv.replyWithin(r.timeouts[config], r.replyAllowance))
	}
	if ctx.Err() != nil {
		sv.kill()
		s.closeServer()
		return results.Repetition{}, nil, ctx.Err()
	}
	if werr != nil || rerr != nil || reply.Repetition == nil {
		code := sv.wait()
		s.server, s.warmFor = nil, ""
		if code == 2 {
			return results.Repetition{}, nil, fmt.Errorf("%s side: %s run --serve: %w:\n%s", s.Name, s.Exe, ErrBadInput, tail(sv.output.Bytes()))
		}
		why := reply.Error
		if errors.Is(rerr, errNoReply) {
			why = rerr.Error()
		}
		if why == "" {
			why = fmt.Sprintf("the side's server exited (status %d) without a reply", code)
		}
		return results.Repetition{Status: results.StatusCrashed, StartedAt: time.Now().UTC(),
			Error: why + ": " + tail(sv.output.Bytes())}, nil, nil
	}
	sv.account(reply.Repetition)
	if sv.record == nil {
		if doc, err := results.Read(mustFind(sv.dir)); err == nil && len(doc.Scenarios) == 1 {
			doc.Scenarios[0].Repetitions = nil
			sv.record = doc
		}
	}
	return *reply.Repetition, sv.record, nil
}

// defaultTimeout is a configuration's timeout where none is given.
const defaultTimeout = 10 * time.Minute

// firstReplyAllowance is what a server's first reply may take beyond the
// repetition's timeout: the worker's setup (keys loaded, the device
// prepared), not yet measured. Later replies are allowed twice the setups
// the server measured, at least setupAllowance.
const (
	firstReplyAllowance = 2 * time.Minute
	setupAllowance      = 30 * time.Second
)

// replyWithin is how long the server may take to answer a request of a
// configuration whose repetitions time out after timeout; allowance, when
// above 0, replaces the setup allowances (tests).
func (sv *server) replyWithin(timeout, allowance time.Duration) time.Duration {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	if allowance > 0 {
		return timeout + allowance
	}
	if sv.served == 0 {
		return timeout + firstReplyAllowance
	}
	return timeout + max(setupAllowance, time.Duration(2*sv.setup*float64(time.Second)))
}

// errNoReply is a server's silence past its deadline.
var errNoReply = errors.New("no reply")

// reply reads the server's reply to the request just sent, or gives up
// (killing the server, so that nothing of it is left) when ctx is done or
// within has passed: a server that stops answering (hung, or stopped by
// SIGSTOP) must not hold ab for ever.
func (sv *server) reply(ctx context.Context, reply *serveReply, within time.Duration) error {
	got := make(chan error, 1)
	go func() { got <- sv.replies.Decode(reply) }()
	timer := time.NewTimer(within)
	defer timer.Stop()
	look := time.NewTicker(stoppedLook)
	defer look.Stop()
	stoppedFor := 0
	for {
		select {
		case err := <-got:
			return err
		case <-ctx.Done():
			sv.kill()
			<-got
			return ctx.Err()
		case <-timer.C:
			sv.kill()
			<-got
			return fmt.Errorf("%w within %s: the server was stopped", errNoReply, within)
		case <-look.C:
			if stoppedFor = stoppedCount(stoppedFor, treeStopped(sv.cmd.Process.Pid)); stoppedFor >= stoppedLooks {
				sv.kill()
				<-got
				return fmt.Errorf("%w: the server or its worker was stopped (a stop signal) and did not resume; the server was killed", errNoReply)
			}
		}
	}
}

// A server, or its worker, stopped by a signal (SIGSTOP, SIGTSTP) answers
// nothing until someone resumes it: seen stopped at stoppedLooks looks in
// a row, stoppedLook apart, it is killed rather than waited for to its
// deadline.
const (
	stoppedLook  = 500 * time.Millisecond
	stoppedLooks = 4
)

// stoppedCount counts consecutive looks that saw the tree stopped.
func stoppedCount(count int, stopped bool) int {
	if stopped {
		return count + 1
	}
	return 0
}

// treeStopped reports whether the process pid or one of its children is
// stopped (state T in /proc/PID/stat).
func treeStopped(pid int) bool {
	pids := []int{pid}
	if kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); err == nil {
		for _, f := range strings.Fields(string(kids)) {
			if k, err := strconv.Atoi(f); err == nil {
				pids = append(pids, k)
			}
		}
	}
	for _, p := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		// The state follows the command's name, which ends at the last ')'.
		if i := bytes.LastIndexByte(stat, ')'); err == nil && i >= 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			return true
		}
	}
	return false
}

// kill ends the server at once; its workers end with it (their
// parent-death signal).
func (sv *server) kill() {
	_ = sv.cmd.Process.Kill()
}

// mustFind is the document in a server's folder, or the name it would
// have (the read then fails and says so).
func mustFind(dir string) string {
	if p, err := results.Find(dir); err == nil {
		return p
	}
	return dir + "/" + results.FormatGzip.FileName()
}

// wait ends the server after its input is closed and returns its exit
// status (-1 when killed).
func (sv *server) wait() int {
	_ = sv.stdin.Close()
	select {
	case <-sv.exited:
	case <-time.After(30 * time.Second):
		_ = sv.cmd.Process.Kill()
		<-sv.exited
	}
	os.RemoveAll(sv.dir)
	return sv.cmd.ProcessState.ExitCode()
}

// closeServer ends the side's server, if one is up.
func (s *side) closeServer() {
	if s.server != nil {
		s.server.wait()
		s.server = nil
	}
	s.warmFor = ""
}

// capped keeps the last max bytes written to it.
type capped struct {
	b   *bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.b.Write(p)
	if over := c.b.Len() - c.max; over > 0 {
		c.b.Next(over)
	}
	return len(p), nil
}
