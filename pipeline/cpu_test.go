package pipeline

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/cpu"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/pipeline/config"
)

// TestCPUBackendEndToEnd runs the real prover through the pipeline: the
// default synthesis, a real setup's key from the on-disk cache, two
// simulated devices, the early free; every proof must verify.
func TestCPUBackendEndToEnd(t *testing.T) {
	const constraints = 1 << 8
	ctx := context.Background()
	pk, vk, err := groth16.Cache{Dir: t.TempDir()}.Get(ctx, circuit.Params{Constraints: constraints}, groth16.KindSetup)
	if err != nil {
		t.Fatal(err)
	}
	defer pk.Close()

	before := runtime.NumGoroutine()
	b, err := cpu.New(cpu.Options{Devices: 2, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Load(ctx, pk); err != nil {
		t.Fatal(err)
	}
	for _, s := range config.Registered().Names() {
		t.Run(string(s), func(t *testing.T) {
			e, err := New(Options{
				Backend:  b,
				Workload: Workload{Constraints: constraints, Partitions: 2, Proofs: 2, Concurrency: 2, SynthesisRounds: 1, Seed: 7},
				Config: Config{Strategy: s, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1, EarlyFree: s != Hold,
					Budget: 1 << 20},
				Verify: func(public []fr.Element, p *groth16.Proof) error { return groth16.Verify(vk, public, p) },
			})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := e.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			checkBalanced(t, e.Tracker())
			checkCounts(t, rep, e.Tracker())
			if rep.ProofsVerified != 2 || rep.PartitionsVerified != 4 {
				for _, p := range rep.Partitions {
					t.Logf("proof %d partition %d: %s %v verify: %v", p.Proof, p.Partition, p.Outcome, p.Err, p.VerifyErr)
				}
				t.Fatalf("%d proofs / %d partitions verified, want 2 / 4", rep.ProofsVerified, rep.PartitionsVerified)
			}
			stages := Summarize(rep.Partitions)
			for _, name := range []string{prover.StageNTT, prover.StageMSMA, prover.StageMSMH, prover.StageAssemble, StageSynthesis, StageGPUStart} {
				if stages[name].Count != 4 {
					t.Errorf("stage %s seen %d times, want 4", name, stages[name].Count)
				}
			}
			if p := peak(t, e.Tracker(), CounterABCBytes); p <= 0 {
				t.Errorf("peak abc_bytes %d: the datasets were never counted", p)
			}
		})
	}
	// The GPU-bound regime's synthesis: every partition a copy of one
	// cached witness, in its own dataset, counted as a computed one; the
	// proofs still verify. The warm-up partition before the run leaves
	// no trace in the counters.
	t.Run("cached-witness", func(t *testing.T) {
		e, err := New(Options{
			Backend:  b,
			Workload: Workload{Constraints: constraints, Partitions: 3, Proofs: 2, Concurrency: 2, SynthesisRounds: 1, Seed: 7, Synthesis: SynthesisCached},
			Config:   Config{Strategy: Release, PartitionWorkers: 3, ChannelCapacity: 1, GPUWorkers: 1},
			Verify:   func(public []fr.Element, p *groth16.Proof) error { return groth16.Verify(vk, public, p) },
		})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if err := e.WarmUp(ctx); err != nil {
			t.Fatal(err)
		}
		if p := peak(t, e.Tracker(), CounterABCBytes); p != 0 {
			t.Fatalf("the warm-up counted %d abc bytes", p)
		}
		rep, err := e.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		checkBalanced(t, e.Tracker())
		checkCounts(t, rep, e.Tracker())
		if rep.ProofsVerified != 2 || rep.PartitionsVerified != 6 {
			t.Fatalf("%d proofs / %d partitions verified, want 2 / 6", rep.ProofsVerified, rep.PartitionsVerified)
		}
		abc, _ := DatasetBytes(e.opts.Workload)
		if p := peak(t, e.Tracker(), CounterABCBytes); p < abc {
			t.Fatalf("peak abc_bytes %d: the copies were not counted as datasets (%d each)", p, abc)
		}
	})
	// A warm prover serves run after run: Next hands the cached witness to
	// a fresh engine, whose counters start from zero and whose proofs
	// verify as the first run's did.
	t.Run("next-run-reuses-the-witness", func(t *testing.T) {
		e, err := New(Options{
			Backend:  b,
			Workload: Workload{Constraints: constraints, Partitions: 2, Proofs: 1, Concurrency: 1, SynthesisRounds: 1, Seed: 7, Synthesis: SynthesisCached},
			Config:   Config{Strategy: Hold, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1},
			Verify:   func(public []fr.Element, p *groth16.Proof) error { return groth16.Verify(vk, public, p) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		witness := e.witness
		for run := 1; run <= 2; run++ {
			rep, err := e.Run(ctx)
			if err != nil {
				t.Fatalf("run %d: %v", run, err)
			}
			checkBalanced(t, e.Tracker())
			checkCounts(t, rep, e.Tracker())
			if rep.PartitionsVerified != 2 {
				t.Fatalf("run %d: %d partitions verified, want 2", run, rep.PartitionsVerified)
			}
			if _, _, ok := e.Tracker().Get(CounterPartitionsDone); !ok {
				t.Fatal("no partitions_done counter")
			}
			if done, _, _ := e.Tracker().Get(CounterPartitionsDone); done != 2 {
				t.Fatalf("run %d: partitions_done %d, want 2 (a fresh tracker per run)", run, done)
			}
			next := e.Next()
			if next.witness != witness || e.witness != nil {
				t.Fatal("Next did not hand the witness over")
			}
			e.Close() // frees nothing: the witness is next's
			e = next
		}
		e.Close()
		if e.witness != nil {
			t.Fatal("Close kept the witness")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Cancelled midway: when the first partition leaves the device,
		// however long a loaded machine took to get there.
		var once sync.Once
		e, err := New(Options{
			Backend:  b,
			Workload: Workload{Constraints: constraints, Partitions: 3, Proofs: 50, Concurrency: 2, SynthesisRounds: 20},
			Config:   Config{Strategy: Release, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 2, EarlyFree: true},
			Observe: func(ev TimelineEvent, _, _ int) {
				if ev == EventGPUEnd {
					once.Do(cancel)
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := e.Run(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v, want context.Canceled", err)
		}
		checkBalanced(t, e.Tracker())
		checkCounts(t, rep, e.Tracker())
		if rep.ProofsNotStarted == 0 || rep.ProofsCancelled == 0 {
			t.Errorf("cancelled midway: %d proofs not started, %d cancelled; want some of each", rep.ProofsNotStarted, rep.ProofsCancelled)
		}
	})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoLeak(t, before)
}
