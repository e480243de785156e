package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/prover"
)

// fakeBackend is a scheduling test double: a GPU whose Start and Wait take
// controlled times. It checks the engine's side of the buffer contract: a/b/c
// must be alive when Start runs, the wires until Wait returns.
type fakeBackend struct {
	devices   int
	startDur  time.Duration
	waitDur   time.Duration
	failStart func(proof, partition int) error
	failWait  func(proof, partition int) error

	starts    atomic.Int64
	onDevice  atomic.Int64 // Starts running now
	contracts atomic.Int64 // contract violations seen
}

var _ prover.Backend = (*fakeBackend)(nil)

func (f *fakeBackend) Name() string { return "fake" }
func (f *fakeBackend) Devices() int { return max(f.devices, 1) }
func (f *fakeBackend) Load(context.Context, *groth16.ProvingKey) error {
	return nil
}
func (f *fakeBackend) Stats(int) prover.DeviceStats { return prover.DeviceStats{} }
func (f *fakeBackend) Close() error                 { return nil }

func (f *fakeBackend) Start(ctx context.Context, dev int, ds *dataset.Dataset) (prover.Job, error) {
	f.starts.Add(1)
	f.onDevice.Add(1)
	defer f.onDevice.Add(-1)
	if dev < 0 || dev >= f.Devices() {
		return nil, fmt.Errorf("fake: device %d", dev)
	}
	if _, _, _, err := ds.ABC(); err != nil {
		f.contracts.Add(1)
		return nil, fmt.Errorf("fake: a/b/c gone before Start: %w", err)
	}
	if err := sleep(ctx, f.startDur); err != nil {
		return nil, err
	}
	if f.failStart != nil {
		if err := f.failStart(ds.Proof, ds.Partition); err != nil {
			return nil, err
		}
	}
	return &fakeJob{f: f, ctx: ctx, ds: ds}, nil
}

type fakeJob struct {
	f   *fakeBackend
	ctx context.Context
	ds  *dataset.Dataset
}

func (j *fakeJob) Wait() (prover.Result, error) {
	if err := sleep(j.ctx, j.f.waitDur); err != nil {
		return prover.Result{}, err
	}
	if _, err := j.ds.Wires(); err != nil {
		j.f.contracts.Add(1)
		return prover.Result{}, fmt.Errorf("fake: wires gone before Wait returned: %w", err)
	}
	if j.f.failWait != nil {
		if err := j.f.failWait(j.ds.Proof, j.ds.Partition); err != nil {
			return prover.Result{}, err
		}
	}
	return prover.Result{Stages: []prover.Stage{{Name: prover.StageMSMA, Duration: j.f.waitDur}}}, nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// tinyConstraints keeps the fake datasets a few kilobytes.
const tinyConstraints = 1 << circuit.MinLogConstraints

// fakeSynth allocates a real (tiny) dataset of the workload's shape and
// takes d to "synthesize" it.
func fakeSynth(d time.Duration, fail func(proof, partition int) error) func(context.Context, int, int) (*dataset.Dataset, error) {
	return fakeSynthOf(func(int, int) time.Duration { return d }, fail)
}

// fakeSynthOf is fakeSynth with each partition's own time.
func fakeSynthOf(d func(proof, partition int) time.Duration, fail func(proof, partition int) error) func(context.Context, int, int) (*dataset.Dataset, error) {
	p := circuit.Params{Constraints: tinyConstraints}
	return func(ctx context.Context, proof, partition int) (*dataset.Dataset, error) {
		ds, err := dataset.New(proof, partition, p.Constraints, p.NumWires(), circuit.NumPublic)
		if err != nil {
			return nil, err
		}
		err = sleep(ctx, d(proof, partition))
		if err == nil && fail != nil {
			err = fail(proof, partition)
		}
		if err != nil {
			ds.Free()
			return nil, err
		}
		return ds, nil
	}
}

func tinyWorkload(proofs, partitions, concurrency int) Workload {
	return Workload{Constraints: tinyConstraints, Partitions: partitions, Proofs: proofs, Concurrency: concurrency, Seed: 1}
}

// datasetBytes is one tiny dataset's size.
func datasetBytes() int64 {
	abc, w := circuit.Params{Constraints: tinyConstraints}.DatasetBytes()
	return abc + w
}

// sampler snapshots a tracker every millisecond while a run goes on and
// hands each snapshot to check.
type sampler struct {
	stop, done chan struct{}
	n          int
}

func startSampler(tr *Tracker, check func(s *Snapshot)) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		var snap Snapshot
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			tr.Snapshot(&snap)
			check(&snap)
			s.n++
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) Stop() int { close(s.stop); <-s.done; return s.n }

// index returns a counter's position in Names.
func index(t *testing.T, name string) int {
	t.Helper()
	i := slices.Index(NewTracker().Names(), name)
	if i < 0 {
		t.Fatalf("no counter %q", name)
	}
	return i
}

func peak(t *testing.T, tr *Tracker, name string) int64 {
	t.Helper()
	_, p, ok := tr.Get(name)
	if !ok {
		t.Fatalf("no counter %q", name)
	}
	return p
}

func value(t *testing.T, tr *Tracker, name string) int64 {
	t.Helper()
	v, _, ok := tr.Get(name)
	if !ok {
		t.Fatalf("no counter %q", name)
	}
	return v
}

// checkBalanced fails the test unless every live counter is back to zero.
func checkBalanced(t *testing.T, tr *Tracker) {
	t.Helper()
	live := tr.Live()
	if len(live) == 0 {
		t.Fatal("the tracker has no live counters to check")
	}
	for name, v := range live {
		if v != 0 {
			t.Errorf("live counter %s = %d after the run, want 0", name, v)
		}
	}
}

// checkNoLeak waits a little for goroutines to wind down, then fails the
// test if more are running than before it began, listing them.
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines outlive the run (had %d before):\n%s", runtime.NumGoroutine(), before, buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkCounts checks that the report's counts add up and agree with the
// tracker's monotone counters.
func checkCounts(t *testing.T, rep *Report, tr *Tracker) {
	t.Helper()
	w := rep.Workload
	if got := rep.PartitionsDone + rep.PartitionsFailed + rep.PartitionsCancelled + rep.PartitionsNotStarted; got != w.Proofs*w.Partitions {
		t.Errorf("partition counts add up to %d, want %d: %+v", got, w.Proofs*w.Partitions, rep)
	}
	if got := rep.ProofsDone + rep.ProofsFailed + rep.ProofsCancelled + rep.ProofsNotStarted; got != w.Proofs {
		t.Errorf("proof counts add up to %d, want %d", got, w.Proofs)
	}
	for _, c := range []struct {
		name string
		want int
	}{
		{CounterPartitionsDone, rep.PartitionsDone},
		{CounterPartitionsFailed, rep.PartitionsFailed},
		{CounterPartitionsCancelled, rep.PartitionsCancelled},
		{CounterProofsDone, rep.ProofsDone},
		{CounterProofsFailed, rep.ProofsFailed},
		{CounterProofsCancelled, rep.ProofsCancelled},
	} {
		if got := value(t, tr, c.name); got != int64(c.want) {
			t.Errorf("counter %s = %d, report says %d", c.name, got, c.want)
		}
	}
	if len(rep.Partitions) != rep.PartitionsDone+rep.PartitionsFailed+rep.PartitionsCancelled {
		t.Errorf("%d partition timings for %d admitted partitions", len(rep.Partitions), rep.PartitionsDone+rep.PartitionsFailed+rep.PartitionsCancelled)
	}
	for _, p := range rep.Partitions {
		if (p.Outcome == Done) != (p.Err == nil) {
			t.Errorf("proof %d partition %d: outcome %s with error %v", p.Proof, p.Partition, p.Outcome, p.Err)
		}
	}
}

// runChecked runs an engine on opts while sampling its tracker, then checks
// the invariants every run must keep: live counters back to zero, no
// goroutine left, counts that add up, the fake backend's contract kept.
func runChecked(t *testing.T, ctx context.Context, opts Options, check func(s *Snapshot)) (*Report, *Tracker, error) {
	t.Helper()
	before := runtime.NumGoroutine()
	rep, tr, err := runAndCheck(t, ctx, opts, check)
	checkNoLeak(t, before)
	return rep, tr, err
}

// runVirtual is runChecked on synctest's clock: the fake stages' sleeps,
// the pacer's ticks and the sampler's are virtual, and time moves only
// when every goroutine of the run waits, so what happens before what is
// the schedule's alone, however loaded the machine (a test of how a
// strategy schedules is then a test of the strategy, not of the host).
// The bubble is the leak check: synctest.Test returns once every
// goroutine started in it has exited, and fails the test if one is left
// blocked.
func runVirtual(t *testing.T, opts Options, check func(s *Snapshot)) (rep *Report, tr *Tracker, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		rep, tr, err = runAndCheck(t, context.Background(), opts, check)
	})
	return rep, tr, err
}

// runAndCheck is runChecked without the goroutine count.
func runAndCheck(t *testing.T, ctx context.Context, opts Options, check func(s *Snapshot)) (*Report, *Tracker, error) {
	t.Helper()
	e, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var s *sampler
	if check != nil {
		s = startSampler(e.Tracker(), check)
	}
	rep, runErr := e.Run(ctx)
	if s != nil {
		s.Stop()
	}
	if rep == nil {
		t.Fatalf("Run returned no report (err %v)", runErr)
	}
	checkBalanced(t, e.Tracker())
	checkCounts(t, rep, e.Tracker())
	if f, ok := opts.Backend.(*fakeBackend); ok && f.contracts.Load() != 0 {
		t.Errorf("the engine broke the buffer contract %d times", f.contracts.Load())
	}
	return rep, e.Tracker(), runErr
}

// errInjected is the failure the tests inject.
var errInjected = errors.New("injected failure")

func failAt(proof, partition int) func(int, int) error {
	return func(p, k int) error {
		if p == proof && k == partition {
			return errInjected
		}
		return nil
	}
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}
