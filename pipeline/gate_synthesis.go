package pipeline

import "time"

// synthesisGate caps the partitions synthesizing at once
// (Config.SynthesisWorkers; cuzk's max_parallel_synthesis). Every strategy
// has it.
type synthesisGate struct {
	slots, taken int64
}

func (g *synthesisGate) Ready(time.Duration) (bool, time.Duration) {
	return g.taken < g.slots, 0
}

func (g *synthesisGate) Admit(_ time.Duration, hold *int64) {
	g.taken++
	*hold = 1
}

func (g *synthesisGate) On(_ time.Duration, ev Event, hold *int64) {
	if *hold == 1 && (ev == EvSynthesized || ev == EvEnded) {
		*hold = 0
		g.taken--
	}
}
