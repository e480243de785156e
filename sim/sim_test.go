package sim

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/pipeline/config"
)

// fixedBackend is a scheduling test double: Start and Wait take fixed
// times, on every device at once.
type fixedBackend struct {
	devices         int
	start, finalize time.Duration
}

func (f fixedBackend) Name() string                                    { return "fixed" }
func (f fixedBackend) Devices() int                                    { return f.devices }
func (f fixedBackend) Load(context.Context, *groth16.ProvingKey) error { return nil }
func (f fixedBackend) Stats(int) prover.DeviceStats                    { return prover.DeviceStats{} }
func (f fixedBackend) Close() error                                    { return nil }
func (f fixedBackend) Start(ctx context.Context, _ int, _ *dataset.Dataset) (prover.Job, error) {
	time.Sleep(f.start)
	return fixedJob{f.finalize}, nil
}

type fixedJob struct{ d time.Duration }

func (j fixedJob) Wait() (prover.Result, error) { time.Sleep(j.d); return prover.Result{}, nil }

const tiny = 1 << circuit.MinLogConstraints

// fixedSynth makes a real tiny dataset in d(proof, partition).
func fixedSynth(d func(proof, partition int) time.Duration) func(context.Context, int, int) (*dataset.Dataset, error) {
	p := circuit.Params{Constraints: tiny}
	return func(_ context.Context, proof, partition int) (*dataset.Dataset, error) {
		t0 := time.Now()
		ds, err := dataset.New(proof, partition, p.Constraints, p.NumWires(), circuit.NumPublic)
		time.Sleep(d(proof, partition) - time.Since(t0)) // the allocation is part of the stage's time
		return ds, err
	}
}

// TestSimulatorMatchesEngine runs the engine on a backend of fixed stage
// times and the simulator on the same times, for every strategy and knob,
// and requires the same peak of every counter: the simulator drives the
// engine's own gates, and this is the proof that it drives them the same
// way. The engine runs on synctest's clock: its sleeps, timers and tickers
// are the real ones of the time package, but time moves only when every
// goroutine of the run is blocked, so an event 9 ms after another happens
// after it however loaded the machine is (in real time a thread scheduled
// late swapped such events, and the test needed retries). One kind of tie
// is real in both: a partition ending synthesis frees its slot (release's
// permit) and is sent (hold's permit), and is taken by an idle GPU worker
// at the same instant; the dispatcher admits the next one before or after
// the take (two goroutines race in the engine). The simulator is run both
// ways; where the two orders give different peaks, the engine's must lie
// between them.
func TestSimulatorMatchesEngine(t *testing.T) {
	abc, wires := circuit.Params{Constraints: tiny}.DatasetBytes()
	one := abc + wires
	// Stage times with no common sums, and each partition's synthesis 9 ms
	// longer than the one before: two events that fall at the same instant
	// race in the engine, and a tie's order may move a peak by one
	// partition. The pacer's period is long enough that the engine's ticks
	// land between the same events as the simulator's.
	const synth, start, finalize = 100 * time.Millisecond, 23 * time.Millisecond, 37 * time.Millisecond
	synthOf := func(proof, partition int) time.Duration {
		return synth + time.Duration(proof*4+partition)*9*time.Millisecond
	}
	cases := []config.Config{
		{Strategy: config.Release, PartitionWorkers: 3, ChannelCapacity: 1, GPUWorkers: 1},
		{Strategy: config.Release, PartitionWorkers: 4, ChannelCapacity: 2, GPUWorkers: 1, EarlyFree: true},
		{Strategy: config.Hold, PartitionWorkers: 3, ChannelCapacity: 1, GPUWorkers: 1},
		{Strategy: config.Hold, PartitionWorkers: 3, ChannelCapacity: 3, GPUWorkers: 2},
		{Strategy: config.Budget, Budget: 3 * one, SynthesisWorkers: 4, ChannelCapacity: 1, GPUWorkers: 1},
		{Strategy: config.Budget, Budget: 3 * one, SynthesisWorkers: 2, ChannelCapacity: 2, GPUWorkers: 1, EarlyFree: true},
		{Strategy: config.Pacer, SynthesisWorkers: 3, ChannelCapacity: 2, GPUWorkers: 1,
			Pacer: config.PacerConfig{TargetDepth: 1, Kp: 0.1, Ki: 0.01, Interval: 250 * time.Millisecond, MaxInFlight: 4}},
		{Strategy: "hold+budget", PartitionWorkers: 4, Budget: 3 * one, ChannelCapacity: 1, GPUWorkers: 1, EarlyFree: true},
	}
	w := config.Workload{Constraints: tiny, Partitions: 4, Proofs: 2, Concurrency: 1, Seed: 1}
	for _, cfg := range cases {
		t.Run(fmt.Sprintf("%s/pw%d/C%d/G%d/free%v", cfg.Strategy, cfg.PartitionWorkers, cfg.ChannelCapacity, cfg.GPUWorkers, cfg.EarlyFree), func(t *testing.T) {
			o := Options{Workload: w, Config: cfg, Host: Host{Devices: 1},
				Stages:      Stages{Synthesis: synth, GPUStart: start, Finalize: finalize, ABCBytes: abc, WireBytes: wires},
				synthesisOf: synthOf}
			res, err := Run(o)
			if err != nil {
				t.Fatal(err)
			}
			o.admitFirst = true
			other, err := Run(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range res.Tracker.Names() {
				if _, a, _ := res.Tracker.Get(name); true {
					if _, b, _ := other.Tracker.Get(name); a != b {
						t.Logf("the tie's order moves peak %s: %d or %d", name, a, b)
					}
				}
			}
			synctest.Test(t, func(t *testing.T) {
				e, err := pipeline.New(pipeline.Options{
					Backend: fixedBackend{devices: 1, start: start, finalize: finalize}, Workload: w, Config: cfg,
					Synthesize: fixedSynth(synthOf),
				})
				if err != nil {
					t.Fatal(err)
				}
				rep, err := e.Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				// A run that did nothing would match a simulator that did
				// nothing.
				if all := w.Proofs * w.Partitions; rep.PartitionsDone != all || res.Report.PartitionsDone != all {
					t.Fatalf("partitions done: engine %d, simulator %d, want %d", rep.PartitionsDone, res.Report.PartitionsDone, all)
				}
				for _, name := range e.Tracker().Names() {
					_, real, _ := e.Tracker().Get(name)
					_, a, _ := res.Tracker.Get(name)
					_, b, _ := other.Tracker.Get(name)
					if real < min(a, b) || real > max(a, b) {
						t.Errorf("peak %s: engine %d, simulator %d (%d admitting first)", name, real, a, b)
					}
				}
			})
		})
	}
}

// TestOutOfMemoryStopsWithTheMoment: release with a slow GPU piles
// finished partitions up until the host's memory is passed; the run stops
// there and says when, with what live.
func TestOutOfMemoryStopsWithTheMoment(t *testing.T) {
	const gib = 1 << 30
	o := Options{
		Workload: config.Workload{Constraints: tiny, Partitions: 10, Proofs: 4, Concurrency: 4, Seed: 1},
		Config:   config.Config{Strategy: config.Release, PartitionWorkers: 8, ChannelCapacity: 1, GPUWorkers: 1},
		Stages: Stages{Synthesis: 10 * time.Second, GPUStart: 4 * time.Second, Finalize: time.Second,
			ABCBytes: 12 * gib, WireBytes: 4 * gib, DeviceSerial: true},
		Host: Host{Memory: 400 * gib, Baseline: 69 * gib},
	}
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if res.OOM == nil {
		t.Fatalf("no OOM: peak %d GiB on a 400 GiB host", res.PeakRSS/gib)
	}
	if res.OOM.RSS <= o.Host.Memory || res.OOM.At <= 0 || res.OOM.Counters[pipeline.CounterWaitingSend] == 0 {
		t.Errorf("OOM %+v: want RSS over the host's memory, a time, and partitions waiting to send", res.OOM)
	}
	if res.Report.ProofsDone == o.Workload.Proofs {
		t.Error("the batch completed past its OOM")
	}
	// The same with hold fits: its permits bound the pile-up.
	o.Config.Strategy = config.Hold
	res, err = Run(o)
	if err != nil || res.OOM != nil || res.Report.ProofsDone != o.Workload.Proofs {
		t.Fatalf("hold: err %v, OOM %+v, %d proofs", err, res.OOM, res.Report.ProofsDone)
	}
	if res.PeakRSS > o.Host.Memory {
		t.Errorf("hold: peak %d over the host", res.PeakRSS)
	}
}

// The CUDA backend's way (SubmitQueue): Start returns once a partition is
// uploaded and queued, so with one slot a second partition is finalizing
// while the first runs on the device, and the GPU worker moves on; the
// CPU backend's way returns from Start after the NTT region, and never has
// more than one partition finalizing on a serial device.
func TestSubmitQueueFreesTheWorkerBeforeTheDevice(t *testing.T) {
	o := Options{
		Workload: config.Workload{Constraints: tiny, Partitions: 6, Proofs: 1, Concurrency: 1, Seed: 1},
		Config:   config.Config{Strategy: config.Release, PartitionWorkers: 6, ChannelCapacity: 1, GPUWorkers: 1},
		Stages: Stages{Synthesis: time.Second, Upload: 10 * time.Millisecond, GPUStart: 100 * time.Millisecond,
			Finalize: 400 * time.Millisecond, ABCBytes: 1 << 20, WireBytes: 1 << 18, DeviceSerial: true},
	}
	peaks := func(q int) (finalizing, onGPU int64, wall time.Duration) {
		t.Helper()
		o.Stages.SubmitQueue = q
		res, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		var snap pipeline.Snapshot
		res.Tracker.Snapshot(&snap)
		for i, name := range res.Tracker.Names() {
			switch name {
			case pipeline.CounterFinalizing:
				finalizing = snap.Peaks[i]
			case pipeline.CounterOnGPU:
				onGPU = snap.Peaks[i]
			}
		}
		return finalizing, onGPU, res.Report.Wall
	}
	fin0, _, wall0 := peaks(0)
	fin1, onGPU1, wall1 := peaks(1)
	if fin0 != 1 {
		t.Errorf("Start after the NTT: %d finalizing at the peak, want 1", fin0)
	}
	if fin1 != 2 || onGPU1 != 1 {
		t.Errorf("submit queue of 1: %d finalizing and %d in Start at the peak, want 2 and 1", fin1, onGPU1)
	}
	// Either way the device does the same work one partition at a time.
	if d := wall1 - wall0; d < -20*time.Millisecond || d > 20*time.Millisecond {
		t.Errorf("wall %v with the submit queue against %v without", wall1, wall0)
	}
}

// A partition that starts synthesis while the device works holds it up by
// PinStall (page-locking its dataset); before DeviceReady the device does
// not work, so locking then holds nothing up.
func TestPinStallHoldsUpAWorkingDevice(t *testing.T) {
	o := Options{
		Workload: config.Workload{Constraints: tiny, Partitions: 8, Proofs: 1, Concurrency: 1, Seed: 1},
		Config:   config.Config{Strategy: config.Hold, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1},
		Stages: Stages{Synthesis: 200 * time.Millisecond, GPUStart: 100 * time.Millisecond, Finalize: 300 * time.Millisecond,
			ABCBytes: 1 << 20, WireBytes: 1 << 18, DeviceSerial: true, SubmitQueue: 1},
	}
	run := func() *Result {
		t.Helper()
		res, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	base := run()
	o.Stages.PinStall = 50 * time.Millisecond
	stalled := run()
	if stalled.DeviceStalled == 0 || stalled.Report.Wall <= base.Report.Wall {
		t.Errorf("pin stall: held up %v, wall %v against %v without", stalled.DeviceStalled, stalled.Report.Wall, base.Report.Wall)
	}
	// With a permit for each, every partition starts synthesis at once,
	// long before a device that is ready only after a minute.
	o.Config.Strategy, o.Config.PartitionWorkers = config.Release, 8
	o.Stages.DeviceReady = time.Minute
	if late := run(); late.DeviceStalled != 0 {
		t.Errorf("held up %v by locking before the device was ready", late.DeviceStalled)
	}
}

// A warm start's page-locked pool: datasets in it add nothing to the RSS
// (the peak is the baseline and the larger of the pool and the live
// datasets), and a pile-up beyond it uploads from ordinary memory in the
// device's stream, holding the device as a phase of its own.
func TestPooledDatasetsAndPageableUploads(t *testing.T) {
	const one = 1<<20 + 1<<18
	o := Options{
		Workload: config.Workload{Constraints: tiny, Partitions: 8, Proofs: 1, Concurrency: 1, Seed: 1},
		Config:   config.Config{Strategy: config.Release, PartitionWorkers: 8, ChannelCapacity: 1, GPUWorkers: 1},
		Stages: Stages{Synthesis: 100 * time.Millisecond, Upload: 10 * time.Millisecond, GPUStart: 50 * time.Millisecond,
			Finalize: 100 * time.Millisecond, ABCBytes: 1 << 20, WireBytes: 1 << 18, DeviceSerial: true, SubmitQueue: 1},
		Host: Host{Baseline: 100 << 20},
	}
	run := func() *Result {
		t.Helper()
		res, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	plain := run() // every partition synthesizes at once: 8 datasets live
	if want := int64(100<<20 + 8*one); plain.PeakRSS != want {
		t.Fatalf("no pool: peak %d, want %d", plain.PeakRSS, want)
	}
	// A pool of 10 datasets holds them all: the peak is the pool's.
	o.Host.PooledBytes = 10 * one
	o.Stages.PageableUpload = 200 * time.Millisecond
	if res := run(); res.PeakRSS != 100<<20+10*one || res.Report.Wall != plain.Report.Wall {
		t.Errorf("pool of 10: peak %d (want %d), wall %v (want %v)", res.PeakRSS, 100<<20+10*one, res.Report.Wall, plain.Report.Wall)
	}
	// A pool of 4: the 4 datasets beyond it add their bytes, and their
	// uploads hold the device 200 ms each.
	o.Host.PooledBytes = 4 * one
	res := run()
	if res.PeakRSS != plain.PeakRSS {
		t.Errorf("pool of 4: peak %d, want %d (the live datasets)", res.PeakRSS, plain.PeakRSS)
	}
	if d := res.Report.Wall - plain.Report.Wall; d < 4*200*time.Millisecond-20*time.Millisecond {
		t.Errorf("pool of 4: wall %v against %v, want 4 pageable uploads (800 ms) more in the device's stream", res.Report.Wall, plain.Report.Wall)
	}
}

// A prover on the host's cores (ProverCores) takes its share of them while
// it works: a partition synthesizing beside it on 2 cores, against the
// prover's 2 threads, goes at 2/3 of its speed alone.
func TestHostProverSharesTheCoresWithSynthesis(t *testing.T) {
	o := Options{
		Workload: config.Workload{Constraints: tiny, Partitions: 2, Proofs: 1, Concurrency: 1, Seed: 1},
		Config:   config.Config{Strategy: config.Hold, PartitionWorkers: 1, ChannelCapacity: 1, GPUWorkers: 1},
		Stages: Stages{Synthesis: 300 * time.Millisecond, GPUStart: 10 * time.Millisecond, Finalize: time.Second,
			ABCBytes: 1 << 20, WireBytes: 1 << 18, DeviceSerial: true},
		Host: Host{Cores: 2},
	}
	synthesis := func() []time.Duration {
		t.Helper()
		res, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		var out []time.Duration
		for _, p := range res.Report.Partitions {
			out = append(out, p.Synthesis)
		}
		return out
	}
	if got := synthesis(); got[0] != 300*time.Millisecond || got[1] != 300*time.Millisecond {
		t.Errorf("prover with cores of its own: synthesis %v, want 300ms each", got)
	}
	o.Host.ProverCores = 2
	// The first synthesizes before the prover has work; the second beside it.
	near := func(d, want time.Duration) bool { return (d - want).Abs() <= time.Microsecond }
	if got := synthesis(); !near(got[0], 300*time.Millisecond) || !near(got[1], 450*time.Millisecond) {
		t.Errorf("prover on the host's cores: synthesis %v, want 300ms then 450ms", got)
	}
}
