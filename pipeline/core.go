package pipeline

import (
	"sync"
	"time"

	"github.com/provebench/provebench/pipeline/config"
)

// Core is the pipeline's bookkeeping, shared by the engine (real time) and
// the simulator (virtual time): the strategy's gates and the counters. A
// driver reports each step of each partition's path through the methods
// below; Core moves the counters and tells the gates, so that a strategy
// and its accounting are written once. Every method is safe for concurrent
// use; now is always the offset from the run's start.
type Core struct {
	mu      sync.Mutex
	tr      *Tracker
	gates   []Gate
	tickers []ticker
	pacer   *pacer
	// changed is closed, and replaced, whenever a gate may have opened.
	changed chan struct{}
}

// NewCore makes the gates of c (resolved and valid for w) counting into
// tr. abcBytes and wireBytes are what one partition's dataset holds, for
// the budget gate. A valid strategy names registered gates only, each of
// which has its maker (TestEveryGateHasItsMaker).
func NewCore(c Config, tr *Tracker, abcBytes, wireBytes int64) *Core {
	k := &Core{tr: tr, changed: make(chan struct{})}
	makers := gateMakers()
	for _, d := range config.Registered().In(c.Strategy) {
		g := makers[d.Name](c, tr, abcBytes, wireBytes)
		k.gates = append(k.gates, g)
		if tk, ok := g.(ticker); ok {
			k.tickers = append(k.tickers, tk)
		}
		if p, ok := g.(*pacer); ok {
			k.pacer = p
		}
	}
	k.gates = append(k.gates, &synthesisGate{slots: int64(c.SynthesisWorkers)})
	return k
}

// gateMaker makes a registered gate for configuration c (resolved and
// valid), counting into tr; abc and wires are one partition's dataset
// bytes.
type gateMaker func(c Config, tr *Tracker, abc, wires int64) Gate

// gateMakers makes each gate of config.Registered, by its name: what the
// engine and the simulator build from the registry's vocabulary.
func gateMakers() map[config.Strategy]gateMaker {
	return map[config.Strategy]gateMaker{
		config.Release: func(c Config, tr *Tracker, _, _ int64) Gate { return newPermitGate(tr, c.PartitionWorkers, false) },
		config.Hold:    func(c Config, tr *Tracker, _, _ int64) Gate { return newPermitGate(tr, c.PartitionWorkers, true) },
		config.Budget:  func(c Config, tr *Tracker, abc, wires int64) Gate { return newBudgetGate(tr, c.Budget, abc, wires) },
		config.Pacer:   func(c Config, tr *Tracker, _, _ int64) Gate { return newPacer(c.Pacer, c.SynthesisWorkers, tr) },
	}
}

// Tracker is the core's counters.
func (k *Core) Tracker() *Tracker { return k.tr }

// TryAdmit admits one partition when every gate is ready: it takes what
// each gate reserves and counts the partition in pre_gpu. Otherwise it
// returns the earliest offset at which time alone may open the gates (0:
// only an event can) and a channel closed at the next event that may.
func (k *Core) TryAdmit(now time.Duration, t *Ticket) (ok bool, retry time.Duration, changed <-chan struct{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, g := range k.gates {
		if ok, r := g.Ready(now); !ok {
			return false, r, k.changed
		}
	}
	for i, g := range k.gates {
		g.Admit(now, &t.holds[i])
	}
	t.preGPU = true
	k.tr.inc(cPreGPU)
	return true, 0, nil
}

// on tells every gate about ev and wakes whoever waits to admit. Called
// with mu held.
func (k *Core) on(now time.Duration, ev Event, t *Ticket) {
	for i, g := range k.gates {
		g.On(now, ev, &t.holds[i])
	}
	close(k.changed)
	k.changed = make(chan struct{})
}

// SynthesisStarted counts the partition in synthesizing.
func (k *Core) SynthesisStarted(t *Ticket) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t.synth = true
	k.tr.inc(cSynthesizing)
}

// Synthesized ends the synthesis; abc and wires are the bytes of the
// dataset it made (0 when it failed), counted from now until freed.
func (k *Core) Synthesized(now time.Duration, t *Ticket, abc, wires int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t.synth {
		t.synth = false
		k.tr.dec(cSynthesizing)
	}
	t.abc, t.wires = abc, wires
	k.tr.add(cABCBytes, abc)
	k.tr.add(cWireBytes, wires)
	k.tr.add(cDatasetBytes, abc+wires)
	k.on(now, EvSynthesized, t)
}

// WaitingSend counts the synthesized partition as waiting for the channel.
func (k *Core) WaitingSend(t *Ticket) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t.waiting = true
	k.tr.inc(cWaitingSend)
	k.tr.inc(cQueueDepth)
}

// Sent moves the partition into the channel.
func (k *Core) Sent(now time.Duration, t *Ticket) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t.waiting = false
	k.tr.dec(cWaitingSend)
	k.tr.inc(cInChannel)
	k.on(now, EvSent, t)
}

// Taken: a GPU worker took the partition from the channel.
func (k *Core) Taken(now time.Duration, t *Ticket) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.tr.dec(cInChannel)
	k.tr.dec(cQueueDepth)
	t.preGPU = false
	k.tr.dec(cPreGPU)
	k.on(now, EvTaken, t)
}

// StartBegan counts the partition on the GPU (inside Backend.Start).
func (k *Core) StartBegan(t *Ticket) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t.onGPU = true
	k.tr.inc(cOnGPU)
}

// Started: Backend.Start returned, with or without a job.
func (k *Core) Started(now time.Duration, t *Ticket) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t.onGPU = false
	k.tr.dec(cOnGPU)
	k.tr.inc(cGPUStarts)
	k.on(now, EvStarted, t)
}

// ABCFreed: n bytes of a/b/c were freed.
func (k *Core) ABCFreed(now time.Duration, t *Ticket, n int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.freeABC(now, t, n)
}

func (k *Core) freeABC(now time.Duration, t *Ticket, n int64) {
	t.abc -= n
	k.tr.add(cABCBytes, -n)
	k.tr.add(cDatasetBytes, -n)
	k.on(now, EvABCFreed, t)
}

// Finalizing counts the partition as waiting for its MSMs.
func (k *Core) Finalizing(t *Ticket) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t.final = true
	k.tr.inc(cFinalizing)
}

// Finalized: the MSMs and assembly returned.
func (k *Core) Finalized(t *Ticket) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t.final = false
	k.tr.dec(cFinalizing)
}

// Deallocated: what was left of the dataset, abc and wires bytes, was
// freed.
func (k *Core) Deallocated(now time.Duration, t *Ticket, abc, wires int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.freeABC(now, t, abc)
	t.wires -= wires
	k.tr.add(cWireBytes, -wires)
	k.tr.add(cDatasetBytes, -wires)
	k.on(now, EvDeallocated, t)
}

// Ended ends the partition on any path: it takes it out of whatever live
// counter it is still in, returns whatever the gates still hold for it and
// counts its outcome. Its dataset must have been freed (Deallocated).
func (k *Core) Ended(now time.Duration, t *Ticket, outcome Outcome) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t.synth {
		t.synth = false
		k.tr.dec(cSynthesizing)
	}
	if t.waiting {
		t.waiting = false
		k.tr.dec(cWaitingSend)
		k.tr.dec(cQueueDepth)
	}
	if t.preGPU {
		t.preGPU = false
		k.tr.dec(cPreGPU)
	}
	if t.onGPU {
		t.onGPU = false
		k.tr.dec(cOnGPU)
	}
	if t.final {
		t.final = false
		k.tr.dec(cFinalizing)
	}
	k.on(now, EvEnded, t)
	switch outcome {
	case Done:
		k.tr.inc(cPartitionsDone)
	case Failed:
		k.tr.inc(cPartitionsFailed)
	case Cancelled:
		k.tr.inc(cPartitionsCancelled)
	}
}

// ProofStarted counts a proof in flight.
func (k *Core) ProofStarted() { k.tr.inc(cProofsInFlight) }

// ProofEnded counts a proof's outcome.
func (k *Core) ProofEnded(outcome Outcome) {
	switch outcome {
	case Done:
		k.tr.inc(cProofsDone)
	case Failed:
		k.tr.inc(cProofsFailed)
	case Cancelled:
		k.tr.inc(cProofsCancelled)
	}
	k.tr.dec(cProofsInFlight)
}

// TickInterval is how often Tick must run: the pacer's control period, or
// 0 when no gate has a control loop.
func (k *Core) TickInterval() time.Duration {
	if len(k.tickers) == 0 {
		return 0
	}
	return k.tickers[0].period()
}

// Tick runs the gates' control loops once and wakes whoever waits to
// admit.
func (k *Core) Tick(now time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, tk := range k.tickers {
		tk.tick(now)
	}
	close(k.changed)
	k.changed = make(chan struct{})
}

// PacerSamples is the pacer's trace (nil without a pacer gate).
func (k *Core) PacerSamples() []PacerSample {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pacer == nil {
		return nil
	}
	return k.pacer.trace
}
