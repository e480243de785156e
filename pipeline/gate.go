package pipeline

import (
	"time"
)

// Event is a step of a partition's path that a gate may act on.
type Event int

// The events, in the order a partition meets them. Done comes on every
// path, also after a failure or a cancellation, and a gate returns there
// whatever the partition still holds of it.
const (
	// EvSynthesized: synthesis ended (with or without a dataset).
	EvSynthesized Event = iota
	// EvSent: the channel to the GPU workers accepted the partition.
	EvSent
	// EvTaken: a GPU worker took the partition from the channel.
	EvTaken
	// EvStarted: Backend.Start (the NTT region) returned.
	EvStarted
	// EvABCFreed: the a/b/c vectors were freed (early free, or at dealloc).
	EvABCFreed
	// EvDeallocated: the rest of the dataset was freed.
	EvDeallocated
	// EvEnded: the partition ended.
	EvEnded
)

// A Gate is one admission rule: the permits (release or hold), the byte
// budget, the pacer or the synthesis cap. A strategy is a set of gates; a
// partition starts synthesis when every gate of the set is Ready, and then
// each one Admits it. The engine calls the gates in real time and the
// simulator in virtual time, through Core, which serialises every call:
// a gate needs no lock of its own. now is the offset from the run's start.
type Gate interface {
	// Ready reports whether the gate would admit a partition now. When it
	// would not, retry is the offset at which time alone may change the
	// answer (0: only another event can).
	Ready(now time.Duration) (ok bool, retry time.Duration)
	// Admit takes what the gate reserves for one partition; hold is the
	// gate's record in that partition's ticket.
	Admit(now time.Duration, hold *int64)
	// On tells the gate that the partition holding hold reached ev.
	On(now time.Duration, ev Event, hold *int64)
}

// ticker is a gate with a control loop of its own (the pacer): Core ticks
// it every Interval.
type ticker interface {
	period() time.Duration
	tick(now time.Duration)
}

// maxGates is the most gates a set holds: permits, budget, pacer,
// synthesis cap.
const maxGates = 4

// Ticket is one admitted partition's record in the core: what each gate
// holds for it and which live counters it is in, so that Core.Ended can
// return all of it on any path.
type Ticket struct {
	holds   [maxGates]int64
	preGPU  bool
	synth   bool
	waiting bool
	onGPU   bool
	final   bool
	abc     int64 // a/b/c bytes counted in abc_bytes
	wires   int64 // wire bytes counted in wire_bytes
}
