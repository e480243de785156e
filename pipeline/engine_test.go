package pipeline

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/pipeline/config"
)

// The strategy tests run a GPU-bound pipeline (fast synthesis, slow fake
// GPU) and compare counters and peaks, which do not depend on the machine's
// speed: what piles up where is decided by the strategy. Those whose
// figures follow from the stages' times (a pile-up, a wall, a mean queue
// depth, which device took what) run on synctest's clock (runVirtual), so
// that a loaded host cannot reorder the stages; the others run in real
// time.

// TestReleasePilesUpHoldDoesNot reproduces the seed's memory wall: with
// the permit released after synthesis and a channel of one, finished
// partitions pile up waiting to send, far beyond the pw permits; holding
// the permit until the channel accepts bounds them by pw.
func TestReleasePilesUpHoldDoesNot(t *testing.T) {
	const pw = 2
	w := tinyWorkload(2, 8, 2) // 16 partitions may be admitted at once
	run := func(s Strategy) (*Report, *Tracker, int64) {
		synthIdx, waitIdx := index(t, CounterSynthesizing), index(t, CounterWaitingSend)
		var maxHeld int64 // synthesizing + waiting_send, as sampled
		rep, tr, err := runVirtual(t, Options{
			Backend:    &fakeBackend{startDur: 15 * time.Millisecond, waitDur: 2 * time.Millisecond},
			Workload:   w,
			Config:     Config{Strategy: s, PartitionWorkers: pw, ChannelCapacity: 1, GPUWorkers: 1},
			Synthesize: fakeSynth(time.Millisecond, nil),
		}, func(s *Snapshot) {
			maxHeld = max(maxHeld, s.Values[synthIdx]+s.Values[waitIdx])
		})
		if err != nil || rep.ProofsDone != w.Proofs {
			t.Fatalf("%s: %d of %d proofs done, err %v", s, rep.ProofsDone, w.Proofs, err)
		}
		return rep, tr, maxHeld
	}

	_, rel, _ := run(Release)
	if p := peak(t, rel, CounterWaitingSend); p <= pw {
		t.Errorf("release, C=1, slow GPU: peak waiting_send %d, want a pile-up > pw=%d", p, pw)
	}
	if p := peak(t, rel, CounterSynthesizing); p > pw {
		t.Errorf("release: peak synthesizing %d > pw=%d", p, pw)
	}
	t.Logf("release: peak waiting_send %d, queue_depth %d, dataset_bytes %d",
		peak(t, rel, CounterWaitingSend), peak(t, rel, CounterQueueDepth), peak(t, rel, CounterDatasetBytes))

	_, hold, maxHeld := run(Hold)
	for _, name := range []string{CounterWaitingSend, CounterPermitsHeld, CounterSynthesizing} {
		if p := peak(t, hold, name); p > pw {
			t.Errorf("hold: peak %s %d > pw=%d", name, p, pw)
		}
	}
	if maxHeld > pw {
		t.Errorf("hold: synthesizing + waiting_send reached %d > pw=%d", maxHeld, pw)
	}
	if rp, hp := peak(t, rel, CounterDatasetBytes), peak(t, hold, CounterDatasetBytes); hp >= rp {
		t.Errorf("hold's peak dataset bytes %d not below release's %d", hp, rp)
	}
	t.Logf("hold: peak waiting_send %d, queue_depth %d, dataset_bytes %d",
		peak(t, hold, CounterWaitingSend), peak(t, hold, CounterQueueDepth), peak(t, hold, CounterDatasetBytes))
}

// TestHoldWithChannelPWKeepsThroughput: cuzk's fix for the memory wall.
// Holding the permit with C=1 can starve the GPU while permit holders wait
// to send; a channel of pw keeps release's throughput with hold's bound.
// Synthesis and GPU are balanced here, so any strategy that serialises
// them shows. The runs are on synctest's clock (runVirtual), so the walls
// are the schedule's alone, the same on an idle laptop and on a loaded
// 2-core runner under -race, and the margin can be narrow.
func TestHoldWithChannelPWKeepsThroughput(t *testing.T) {
	const pw = 4
	w := tinyWorkload(4, 8, 2)
	run := func(s Strategy, c int) time.Duration {
		rep, tr, err := runVirtual(t, Options{
			Backend:    &fakeBackend{startDur: 4 * time.Millisecond, waitDur: 2 * time.Millisecond},
			Workload:   w,
			Config:     Config{Strategy: s, PartitionWorkers: pw, ChannelCapacity: c, GPUWorkers: 1},
			Synthesize: fakeSynth(16*time.Millisecond, nil),
		}, nil)
		if err != nil || rep.ProofsDone != w.Proofs {
			t.Fatalf("%s C=%d: %d of %d proofs done, err %v", s, c, rep.ProofsDone, w.Proofs, err)
		}
		if s == Hold {
			if p := peak(t, tr, CounterWaitingSend); p > pw {
				t.Errorf("hold C=%d: peak waiting_send %d > pw", c, p)
			}
		}
		t.Logf("%s C=%d: wall %v, %.1f proofs/s, peak dataset bytes %d", s, c, rep.Wall,
			float64(rep.ProofsDone)/rep.Wall.Seconds(), peak(t, tr, CounterDatasetBytes))
		return rep.Wall
	}
	rel := run(Release, 1)
	// The GPU's floor: 32 partitions of 4 ms each on one GPU worker, plus
	// the first synthesis. A release that does not reach it lost the
	// pipeline itself, and the comparison below would prove nothing.
	if floor := 32 * 4 * time.Millisecond; rel < floor || rel > floor*6/5 {
		t.Fatalf("release took %v, want the GPU-bound %v (within 20%%)", rel, floor)
	}
	// For the log: with arrivals this regular hold keeps up even at C=1;
	// cuzk's loss came from partitions finishing synthesis in bursts.
	run(Hold, 1)
	if holdPW := run(Hold, pw); holdPW > rel*11/10 {
		t.Errorf("hold with C=pw took %v, release %v: more than 10%% slower", holdPW, rel)
	}
}

// TestBudgetNeverExceeded: live dataset bytes stay within the budget, with
// and without the early a/b/c free, and the budget is what limits the
// pipeline (it fills up). The MSMs are slow, so partitions gather in
// finalize: without the early free each holds a whole reservation there,
// so no more than three fit; with it only the wires' share, so more do.
func TestBudgetNeverExceeded(t *testing.T) {
	one := datasetBytes()
	budget := 3*one + one/2
	for _, early := range []bool{false, true} {
		rep, tr, err := runVirtual(t, Options{
			Backend:  &fakeBackend{startDur: 3 * time.Millisecond, waitDur: 40 * time.Millisecond},
			Workload: tinyWorkload(3, 6, 3),
			Config: Config{Strategy: Budget, Budget: budget, ChannelCapacity: 2, GPUWorkers: 1,
				SynthesisWorkers: 4, EarlyFree: early},
			Synthesize: fakeSynth(time.Millisecond, nil),
		}, nil)
		if err != nil || rep.ProofsDone != 3 {
			t.Fatalf("early_free=%v: %d proofs done, err %v", early, rep.ProofsDone, err)
		}
		for _, name := range []string{CounterDatasetBytes, CounterBudgetReservedBytes} {
			if p := peak(t, tr, name); p > budget {
				t.Errorf("early_free=%v: peak %s %d exceeds the budget %d", early, name, p, budget)
			}
		}
		if p := peak(t, tr, CounterBudgetReservedBytes); p < 3*one {
			t.Errorf("early_free=%v: peak reservation %d, the budget (%d, three datasets) never filled", early, p, budget)
		}
		if p := peak(t, tr, CounterPermitsHeld); p != 0 {
			t.Errorf("budget strategy took %d permits", p)
		}
		fin := peak(t, tr, CounterFinalizing)
		if !early && fin > 3 {
			t.Errorf("without the early free %d partitions were finalizing at once; the budget holds 3", fin)
		}
		if early && fin <= 3 {
			t.Errorf("with the early free only %d partitions were finalizing at once: a/b/c bytes did not come back at Start", fin)
		}
		t.Logf("early_free=%v: peak dataset %d, abc %d, wires %d, finalizing %d of budget %d", early,
			peak(t, tr, CounterDatasetBytes), peak(t, tr, CounterABCBytes), peak(t, tr, CounterWireBytes),
			peak(t, tr, CounterFinalizing), budget)
	}
}

// TestPacerHoldsTarget: on a GPU-bound pipeline, where without pacing the
// queue would grow to everything admitted, the pacer keeps the mean queue
// depth within one partition of its target over the middle of the run,
// and never exceeds max_in_flight.
func TestPacerHoldsTarget(t *testing.T) {
	const target = 3.0
	w := tinyWorkload(6, 16, 2)
	cfg := Config{Strategy: Pacer, ChannelCapacity: 32, GPUWorkers: 1, SynthesisWorkers: 4,
		Pacer: PacerConfig{TargetDepth: target, Interval: 2 * time.Millisecond}}
	rep, tr, err := runVirtual(t, Options{
		Backend:    &fakeBackend{startDur: 6 * time.Millisecond, waitDur: time.Millisecond},
		Workload:   w,
		Config:     cfg,
		Synthesize: fakeSynth(8*time.Millisecond, nil),
	}, nil)
	if err != nil || rep.ProofsDone != w.Proofs {
		t.Fatalf("%d of %d proofs done, err %v", rep.ProofsDone, w.Proofs, err)
	}
	if len(rep.Pacer) < 20 {
		t.Fatalf("only %d pacer samples", len(rep.Pacer))
	}
	// The middle of the run: after the fill, before the tail drains.
	mid := rep.Pacer[len(rep.Pacer)/5 : len(rep.Pacer)*4/5]
	var sum float64
	for _, s := range mid {
		sum += float64(s.Depth)
	}
	mean := sum / float64(len(mid))
	t.Logf("pacer: mean depth %.2f over %d samples (target %v); peak depth %d, pre_gpu %d (max %d); wall %v",
		mean, len(mid), target, peak(t, tr, CounterQueueDepth), peak(t, tr, CounterPreGPU), rep.Config.Pacer.MaxInFlight, rep.Wall)
	if !(math.Abs(mean-target) <= 1) { // NaN fails too
		t.Errorf("mean queue depth %.2f outside target %v ± 1", mean, target)
	}
	if p := peak(t, tr, CounterPreGPU); p > int64(rep.Config.Pacer.MaxInFlight) {
		t.Errorf("peak pre_gpu %d exceeds max_in_flight %d", p, rep.Config.Pacer.MaxInFlight)
	}
}

// TestKnobsAreIndependent runs every strategy with the other knobs set
// apart from their defaults and checks each bound the knobs promise.
func TestKnobsAreIndependent(t *testing.T) {
	one := datasetBytes()
	for _, cfg := range []Config{
		{Strategy: Release, PartitionWorkers: 3, SynthesisWorkers: 2, ChannelCapacity: 2, GPUWorkers: 2, EarlyFree: true},
		{Strategy: Hold, PartitionWorkers: 3, ChannelCapacity: 3, GPUWorkers: 1},
		{Strategy: Budget, Budget: 4 * one, SynthesisWorkers: 2, ChannelCapacity: 1, GPUWorkers: 2},
		{Strategy: Pacer, SynthesisWorkers: 3, ChannelCapacity: 4, GPUWorkers: 2, EarlyFree: true,
			Pacer: PacerConfig{TargetDepth: 1, Kp: 0.2, Ki: 0.02, Interval: time.Millisecond, MaxInFlight: 5}},
	} {
		t.Run(string(cfg.Strategy), func(t *testing.T) {
			fb := &fakeBackend{devices: 2, startDur: 2 * time.Millisecond, waitDur: 3 * time.Millisecond}
			rep, tr, err := runVirtual(t, Options{
				Backend: fb, Workload: tinyWorkload(3, 5, 2), Config: cfg,
				Synthesize: fakeSynth(2*time.Millisecond, nil),
			}, nil)
			if err != nil || rep.ProofsDone != 3 || rep.PartitionsDone != 15 {
				t.Fatalf("%d proofs, %d partitions done, err %v", rep.ProofsDone, rep.PartitionsDone, err)
			}
			rc := rep.Config
			if p := peak(t, tr, CounterSynthesizing); p > int64(rc.SynthesisWorkers) {
				t.Errorf("peak synthesizing %d > synthesis_workers %d", p, rc.SynthesisWorkers)
			}
			if p := peak(t, tr, CounterInChannel); p > int64(rc.ChannelCapacity) {
				t.Errorf("peak in_channel %d > channel_capacity %d", p, rc.ChannelCapacity)
			}
			if p, n := peak(t, tr, CounterOnGPU), fb.Devices()*rc.GPUWorkers; p > int64(n) {
				t.Errorf("peak on_gpu %d > %d workers", p, n)
			}
			if p := peak(t, tr, CounterProofsInFlight); p > 2 {
				t.Errorf("peak proofs_in_flight %d > concurrency 2", p)
			}
			devices := map[int]bool{}
			for _, p := range rep.Partitions {
				devices[p.Device] = true
				if !cfg.EarlyFree && p.FreeABC > 0 {
					t.Errorf("free_abc %v with early_free off", p.FreeABC)
				}
			}
			if len(devices) != 2 {
				t.Errorf("partitions ran on devices %v, want both", devices)
			}
		})
	}
}

// TestFailuresFailTheirProofOnly injects a failure at each place a
// partition can fail: the other proofs complete, the failed proof's other
// partitions are cancelled or never start, and every buffer comes back.
func TestFailuresFailTheirProofOnly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		synth func(int, int) error
		start func(int, int) error
		wait  func(int, int) error
		msg   string
	}{
		{name: "synthesis", synth: failAt(1, 2), msg: "synthesis"},
		{name: "start", start: failAt(1, 2), msg: "gpu start"},
		{name: "wait", wait: failAt(1, 2), msg: "finalize"},
	} {
		for _, s := range config.Registered().Names() {
			t.Run(tc.name+"/"+string(s), func(t *testing.T) {
				cfg := Config{Strategy: s, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1,
					Budget: 3 * datasetBytes(), EarlyFree: true}
				rep, _, err := runChecked(t, context.Background(), Options{
					Backend: &fakeBackend{startDur: time.Millisecond, waitDur: 2 * time.Millisecond,
						failStart: tc.start, failWait: tc.wait},
					Workload:   tinyWorkload(3, 5, 2),
					Config:     cfg,
					Synthesize: fakeSynth(time.Millisecond, tc.synth),
				}, nil)
				if err != nil {
					t.Fatalf("a failed proof is not a failed run: %v", err)
				}
				if rep.ProofsDone != 2 || rep.ProofsFailed != 1 || rep.PartitionsFailed != 1 {
					t.Fatalf("proofs done %d failed %d, partitions failed %d; want 2, 1, 1",
						rep.ProofsDone, rep.ProofsFailed, rep.PartitionsFailed)
				}
				pt := rep.Proofs[1]
				if pt.Outcome != Failed || !errors.Is(pt.Err, errInjected) {
					t.Fatalf("proof 1: outcome %s, error %v", pt.Outcome, pt.Err)
				}
				mustContain(t, pt.Err, "proof 1 partition 2", tc.msg)
				for _, p := range rep.Partitions {
					if p.Proof != 1 && p.Outcome != Done {
						t.Errorf("proof %d partition %d: %s (%v)", p.Proof, p.Partition, p.Outcome, p.Err)
					}
					if p.Proof == 1 && p.Partition != 2 && p.Outcome == Failed {
						t.Errorf("sibling partition %d failed rather than cancelled: %v", p.Partition, p.Err)
					}
				}
			})
		}
	}
}

// TestCancelStopsPromptly cancels a run of slow partitions midway, as the
// first partition ends: Run returns the context's error at once, with
// every buffer freed and no goroutine left behind. The run is on
// synctest's clock, so "at once" is exact: no stage may wait out a timer
// after the cancellation (the batch has 80 partitions of 20 ms on one GPU
// worker, 1.6 s left to wait), and the machine's load cannot delay the
// cancellation past the first partition or make the wind-down look slow.
func TestCancelStopsPromptly(t *testing.T) {
	for _, s := range config.Registered().Names() {
		t.Run(string(s), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var once sync.Once
				var cancelledAt time.Time
				fb := &fakeBackend{startDur: 20 * time.Millisecond, waitDur: 30 * time.Millisecond,
					failWait: func(int, int) error {
						once.Do(func() { cancelledAt = time.Now(); cancel() })
						return nil
					}}
				rep, _, err := runAndCheck(t, ctx, Options{
					Backend:  fb,
					Workload: tinyWorkload(20, 4, 3),
					Config: Config{Strategy: s, PartitionWorkers: 3, ChannelCapacity: 1, GPUWorkers: 1,
						Budget: 4 * datasetBytes()},
					Synthesize: fakeSynth(10*time.Millisecond, nil),
				}, nil)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Run: %v, want context.Canceled", err)
				}
				if cancelledAt.IsZero() || rep.PartitionsDone == 0 {
					t.Fatalf("cancelled at %v with %d partitions done: the cancellation did not come midway", cancelledAt, rep.PartitionsDone)
				}
				if rep.ProofsNotStarted == 0 || rep.ProofsCancelled == 0 {
					t.Errorf("cancelled run: %d proofs not started, %d cancelled; want some of each", rep.ProofsNotStarted, rep.ProofsCancelled)
				}
				if took := time.Since(cancelledAt); took != 0 {
					t.Errorf("Run returned %v (on the test's clock) after the cancellation, want at once", took)
				}
			})
		})
	}
}

// TestVerifyFailuresAreCounted: a proof whose partitions do not verify is
// still proved; the report counts it as failing verification.
func TestVerifyFailuresAreCounted(t *testing.T) {
	rep, _, err := runChecked(t, context.Background(), Options{
		Backend:    &fakeBackend{},
		Workload:   tinyWorkload(2, 3, 2),
		Config:     Config{Strategy: Hold, PartitionWorkers: 2, ChannelCapacity: 2, GPUWorkers: 1},
		Synthesize: fakeSynth(0, nil),
		Verify: func(public []fr.Element, _ *groth16.Proof) error {
			if len(public) != 2 {
				t.Errorf("Verify got %d public inputs, want 2", len(public))
			}
			if public[0].IsZero() && public[1].IsZero() {
				return nil // the fake datasets are all zero
			}
			return errInjected
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ProofsVerified != 2 || rep.PartitionsVerified != 6 || rep.ProofsVerifyFailed != 0 {
		t.Errorf("verified %d proofs, %d partitions; %d failed", rep.ProofsVerified, rep.PartitionsVerified, rep.ProofsVerifyFailed)
	}

	rep, _, err = runChecked(t, context.Background(), Options{
		Backend:    &fakeBackend{},
		Workload:   tinyWorkload(2, 3, 2),
		Config:     Config{Strategy: Hold, PartitionWorkers: 2, ChannelCapacity: 2, GPUWorkers: 1},
		Synthesize: fakeSynth(0, nil),
		Verify: func(_ []fr.Element, _ *groth16.Proof) error {
			return errInjected
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ProofsDone != 2 || rep.ProofsVerifyFailed != 2 || rep.PartitionsVerifyFailed != 6 || rep.ProofsVerified != 0 {
		t.Errorf("done %d, verify failed %d proofs / %d partitions, verified %d",
			rep.ProofsDone, rep.ProofsVerifyFailed, rep.PartitionsVerifyFailed, rep.ProofsVerified)
	}
}

// TestTimingsChain: every proved partition's stages are recorded and chain
// up inside the run; the wall time spans them.
func TestTimingsChain(t *testing.T) {
	rep, _, err := runChecked(t, context.Background(), Options{
		Backend:    &fakeBackend{startDur: 2 * time.Millisecond, waitDur: 3 * time.Millisecond},
		Workload:   tinyWorkload(2, 3, 1),
		Config:     Config{Strategy: Hold, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1, EarlyFree: true},
		Synthesize: fakeSynth(2*time.Millisecond, nil),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Partitions) != 6 {
		t.Fatalf("%d timings", len(rep.Partitions))
	}
	for i, p := range rep.Partitions {
		if p.Proof != i/3 || p.Partition != i%3 {
			t.Errorf("timing %d is proof %d partition %d", i, p.Proof, p.Partition)
		}
		if p.Synthesis < 2*time.Millisecond || p.GPUStart < 2*time.Millisecond || p.Finalize < 3*time.Millisecond {
			t.Errorf("timing %d shorter than the fake's stages: %+v", i, p)
		}
		if p.Device != 0 || len(p.Stages) != 1 || p.FreeABC == 0 {
			t.Errorf("timing %d: device %d, stages %v, free_abc %v", i, p.Device, p.Stages, p.FreeABC)
		}
		if p.End() > rep.Elapsed {
			t.Errorf("timing %d ends at %v, after the run (%v)", i, p.End(), rep.Elapsed)
		}
	}
	// Concurrency 1: proof 1 starts after proof 0 ended.
	if rep.Proofs[1].Started < rep.Proofs[0].Ended {
		t.Errorf("proof 1 started at %v, before proof 0 ended at %v", rep.Proofs[1].Started, rep.Proofs[0].Ended)
	}
	if rep.Wall <= 0 || rep.Wall > rep.Elapsed {
		t.Errorf("wall %v, elapsed %v", rep.Wall, rep.Elapsed)
	}
	sum := Summarize(rep.Partitions)
	for _, name := range []string{StageSynthesis, StageQueueWait, StageGPUStart, StageFreeABC, StageFinalize, StageDealloc, "msm_a"} {
		if sum[name].Count != 6 {
			t.Errorf("summary of %s counts %d, want 6", name, sum[name].Count)
		}
	}
}

func TestEngineRunsOnce(t *testing.T) {
	e, err := New(Options{
		Backend:    &fakeBackend{},
		Workload:   tinyWorkload(1, 1, 1),
		Config:     Config{Strategy: Hold, PartitionWorkers: 1, ChannelCapacity: 1, GPUWorkers: 1},
		Synthesize: fakeSynth(0, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background()); err == nil {
		t.Fatal("second Run succeeded")
	}
}

// TestComposedGatesAllHold runs cuzk's final shape, a byte budget and a
// pacer under a synthesis cap, plus the permits of hold: every gate's bound
// holds at once.
func TestComposedGatesAllHold(t *testing.T) {
	one := datasetBytes()
	cfg := Config{Strategy: "hold+budget+pacer", PartitionWorkers: 3, Budget: 2 * one, SynthesisWorkers: 2,
		ChannelCapacity: 2, GPUWorkers: 1,
		Pacer: PacerConfig{TargetDepth: 1, Kp: 0.2, Ki: 0.02, Interval: time.Millisecond, MaxInFlight: 3}}
	fb := &fakeBackend{startDur: time.Millisecond, waitDur: 2 * time.Millisecond}
	rep, tr, err := runChecked(t, context.Background(), Options{
		Backend: fb, Workload: tinyWorkload(2, 6, 1), Config: cfg,
		Synthesize: fakeSynth(2*time.Millisecond, nil),
	}, nil)
	if err != nil || rep.PartitionsDone != 12 {
		t.Fatalf("%d partitions done, err %v", rep.PartitionsDone, err)
	}
	for _, b := range []struct {
		counter string
		bound   int64
	}{
		{CounterPermitsHeld, 3},
		{CounterBudgetReservedBytes, 2 * one},
		{CounterDatasetBytes, 2 * one},
		{CounterSynthesizing, 2},
		{CounterPreGPU, 3},
	} {
		if p := peak(t, tr, b.counter); p > b.bound || p == 0 {
			t.Errorf("peak %s %d, want in (0, %d]", b.counter, p, b.bound)
		}
	}
	if len(rep.Pacer) == 0 {
		t.Error("no pacer trace")
	}
}
