package run

// A step is one repetition of a run: which configuration (its position in
// the specs given to Run), which repetition (from 0, warm-ups and measured
// ones counted apart, as Progress and results number them) and whether it
// is a warm-up.
type step struct {
	config int
	index  int
	warmup bool
}

// runOrder is the order in which Run runs the repetitions of specs.
//
// Sequential (the default): every repetition of the first configuration,
// then of the second, and so on, each configuration's warm-ups first.
//
// Interleaved: measured repetitions in rounds, repetition 1 of every
// configuration, then repetition 2 of every one, and so on, so that a host
// that drifts during the run (a shared VM's steal time rising, a device
// heating up) slows every configuration alike instead of the last ones. A
// configuration with fewer repeats drops out of the later rounds. Each
// configuration's warm-ups run right before its first measured repetition,
// in the first round, as they do sequentially: what a warm-up warms (its
// proving key in the page cache, the device's clocks) is its own
// configuration's, and other configurations' warm-ups in between would
// undo it (large keys evict each other from the page cache).
func runOrder(specs []Spec, interleave bool) []step {
	var order []step
	if !interleave {
		for c, s := range specs {
			for k := range s.Warmups {
				order = append(order, step{config: c, index: k, warmup: true})
			}
			for k := range s.Repeats {
				order = append(order, step{config: c, index: k})
			}
		}
		return order
	}
	rounds := 0
	for _, s := range specs {
		rounds = max(rounds, s.Repeats, 1) // 1: warm-ups of configurations without repeats
	}
	for round := range rounds {
		for c, s := range specs {
			if round == 0 {
				for k := range s.Warmups {
					order = append(order, step{config: c, index: k, warmup: true})
				}
			}
			if round < s.Repeats {
				order = append(order, step{config: c, index: round})
			}
		}
	}
	return order
}
