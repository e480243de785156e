// Package pipeline is the proving engine that provebench benchmarks: a
// model of the cuzk engine (curio extern/cuzk/cuzk-core/src/engine.rs,
// commit 98a52b33) that drives a real prover backend (gpu.Backend) through
// a configurable backpressure strategy, and counts every buffer it holds.
//
// # Flow
//
// A run proves a batch of Workload.Proofs proofs, at most
// Workload.Concurrency of them in flight at once (cuzk-bench batch -n -j),
// each of Workload.Partitions partitions:
//
//	dispatcher ──admit──▶ synthesis ──▶ bounded channel (C) ──▶ GPU workers ──▶ finalizers
//	(proof slot,          (one goroutine   (waiting_send,          (G per device:   (Job.Wait: MSMs,
//	 strategy gate,        per partition)   in_channel)             Backend.Start,   assembly; dealloc)
//	 synthesis slot)                                                early a/b/c free)
//
// A single dispatcher admits partitions in (proof, partition) order, as
// cuzk's dispatcher does: a proof takes one of the Concurrency slots before
// its first partition and gives it back when its last partition has ended.
// Admission waits until every gate of the strategy is ready at once (the
// synthesis cap of SynthesisWorkers slots among them) and then takes from
// each. Each admitted partition synthesizes in its own goroutine
// and then offers its dataset to the channel of capacity ChannelCapacity;
// it waits there, holding the dataset, while the channel is full. The GPU
// workers (GPUWorkers on each of the backend's devices) take partitions
// from the one channel in arrival order and run Backend.Start, the NTT
// region; with EarlyFree the worker frees a/b/c as soon as Start returns.
// The worker then hands the job to a finalizer, its own goroutine, and is
// free for the next partition while the MSMs run: there is one finalizer
// per started partition, as cuzk spawns a task per partition, and the
// backend's device queue, not the engine, decides how many MSMs run at
// once. The finalizer waits for the job, deallocates the dataset and, with
// Options.Verify, verifies the proof against its public inputs (copied
// before the free; verification is the harness's check and is not timed as
// a stage). A proof is done when all its partitions are.
//
// cuzk orders its GPU queue by (job, partition); here the channel is FIFO,
// as the bounded channel of the commit modelled.
//
// # Strategies
//
// Config.Strategy selects how admission holds back finished work: a set
// of gates (Gate), each in its own file, behind one small interface: Ready
// and Admit at admission, then On for each step of the partition's path
// (synthesized, sent, taken, started, a/b/c freed, deallocated, ended).
// Core holds the gates and the counters; the engine drives it in real time
// and the simulator (package sim) in virtual time, so a strategy
// is written once. Its StrategyDef (pipeline/config, listed by
// config.Registered, which links no prover) says everything else about
// it: its validation, its bound on live datasets for the pre-flight
// check, its description for the scenario schema and its colour in
// reports; gateMakers (core.go) makes the gate it names. A strategy names its gates joined by "+" (at most one
// permit gate, then budget, then pacer: "budget+pacer" is cuzk's final
// engine); the synthesis cap (SynthesisWorkers, cuzk's
// max_parallel_synthesis) is a gate of every strategy. The four single
// gates are the presets. The other knobs (channel capacity, early free,
// GPU workers per device) are independent of the strategy.
//
//   - release: a partition takes one of PartitionWorkers (pw) permits
//     before synthesis and returns it as soon as synthesis ends. Finished
//     partitions then queue for the channel, each with its whole dataset,
//     and nothing bounds them but the batch: cuzk's memory wall (28 queued
//     at pw=12 with C=1).
//   - hold: the permit is returned only when the channel has accepted the
//     partition, so at most pw partitions are synthesizing or waiting to
//     send. With C=1 the permit holders idle while the GPU is busy; C=pw
//     restores release's throughput with hold's bound.
//   - budget: admission reserves the dataset's bytes (a/b/c plus wires,
//     circuit.Params.DatasetBytes) from Config.Budget before synthesis; the
//     a/b/c bytes come back at the early free (or at dealloc without it),
//     the wires' at dealloc. Live dataset bytes never exceed the budget. A
//     budget smaller than one dataset is a validation error.
//   - pacer: admission is paced by the controller below, holding the GPU
//     queue at Pacer.TargetDepth. Pacer.MaxInFlight caps the partitions
//     admitted and not yet taken by a GPU worker, whatever the controller
//     says.
//
// # The pacer's control law
//
// The controlled variable is the GPU queue depth q: partitions synthesized
// and not yet taken by a GPU worker (waiting_send + in_channel, the
// counter queue_depth). Every Pacer.Interval the controller samples q and
// the number of Backend.Start calls that have returned, and sets the
// admission rate λ:
//
//	T   ← T + 0.2·(Δt/n − T)          moving average of the time between GPU starts
//	                                  (n starts in the last Δt; seeded by the first
//	                                  interval measured between two starts)
//	μ   = 1 / max(T, time since the last start)     GPU rate (feed-forward); a
//	                                  stalled GPU lowers it
//	e   = TargetDepth − q             error, in partitions
//	I   ← clamp(I + e·Δt·μ, ±1/Ki)    integral, in partitions × GPU intervals;
//	                                  the clamp is the anti-windup
//	m   = clamp(1 + Kp·e + Ki·I, 0.1, 5)
//	λ   = m·μ                         partitions per second
//
// Admission takes a token from a bucket that fills at λ and holds at most
// two tokens (timer slack is not lost; a stall elsewhere banks no burst).
// Measuring the integral in GPU intervals rather than seconds makes the
// gains dimensionless: they carry over between partition sizes (2^10
// constraints in a test, 2^27 in production) as long as the ratio of
// synthesis to GPU time is the same. That ratio, the synthesis delay D in
// GPU intervals, sets the stability limit: the proportional loop is stable
// for Kp·D < π/2. The defaults are TargetDepth 2, Kp 0.1, Ki 0.01,
// Interval 20ms and MaxInFlight = SynthesisWorkers + 2·⌈TargetDepth⌉;
// Kp = 0.1 suits D up to about 15. With cuzk's figures (35-55 s of
// synthesis against 1.82 s of GPU time per partition, D of 20 to 30) use
// Kp of 0.05 or less. The integral removes the steady offset left by the
// rate estimate's bias and by admissions the dispatcher loses to its other
// gates (proof slots, synthesis slots).
//
// Before the GPU rate is known (two starts), the bootstrap grants
// SynthesisWorkers + ⌈TargetDepth⌉ admissions: enough to fill the
// synthesis workers and the target queue. Whenever no admitted partition is
// on its way to the GPU (pre_gpu = 0) the pacer admits regardless: an empty
// pipe only starves the GPU. The cuzk pacer uses the same structure (PI on
// the waiting count around a GPU-rate feed-forward, output clamped to
// [0.1, 5]); it dispatches on a variable timer instead of a token bucket and
// integrates in seconds. Report.Pacer records the controller's state every
// period. The package tests hold the mean depth within ±1 partition of the
// target on a GPU-bound pipeline.
//
// # Counters
//
// The Tracker holds atomic counters with their peaks (see the Counter*
// names). Live counters describe what the pipeline holds now:
// proofs_in_flight, permits_held, budget_reserved_bytes, pre_gpu
// (synthesizing + waiting_send + in_channel), synthesizing, waiting_send
// (synthesized, blocked before the channel), in_channel, queue_depth
// (waiting_send + in_channel, kept as one counter so that it is exact),
// on_gpu (inside Backend.Start), finalizing (Start returned, Job.Wait
// pending), abc_bytes, wire_bytes and dataset_bytes (their sum, so its peak
// is the true peak). Monotone counters count events: gpu_starts,
// partitions_done/failed/cancelled, proofs_done/failed/cancelled. Every
// increment of a live counter has its decrement on every path: all of them
// are zero when Run returns, after a success, a failure or a cancellation,
// and the tests assert it. A counter is incremented after the resource it
// counts is taken and decremented before it is given back, so the counters
// never exceed the bounds the strategies promise (in_channel <= C,
// permits_held <= pw, dataset_bytes <= budget_reserved_bytes <= budget).
// Snapshot reads them all without allocating, cheap enough to sample every
// millisecond.
//
// # Failures and cancellation
//
// A synthesis or prover error (Start or Job.Wait) fails its partition and
// its proof; the proof's other partitions are cancelled rather than proved
// for nothing: the proof's context is cancelled, so they stop at their next
// cancellation point (synthesis, the wait for the channel, the GPU
// worker's check before Start, the backend) and free their buffers, and
// those not yet admitted never start. (cuzk marks the job failed and
// discards the results of partitions already in its pipeline.) Other proofs
// carry on; Run reports failed proofs in the Report, not as an error.
// Cancelling Run's context cancels every proof the same way; Run returns
// once every goroutine it started has ended and every buffer is freed,
// with the report of what ran and an error wrapping the context's.
//
// # Timings
//
// Each admitted partition gets a PartitionTiming: admission offset and
// wait, then synthesis, queue_wait (synthesis end to a GPU worker taking
// it), gpu_start (Backend.Start), free_abc, finalize (Start returned to
// Job.Wait returned) and dealloc, which follow one another without gaps,
// plus the backend's own stages. Summarize aggregates them by stage name
// for reports, and they are the calibration data of the simulator
// (predict).
package pipeline
