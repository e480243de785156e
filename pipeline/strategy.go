package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// Strategy names the admission gates a configuration composes, joined by
// "+" in a fixed order: at most one permit gate (release or hold), then
// budget, then pacer ("hold", "budget+pacer", "hold+budget+pacer"). The
// synthesis cap (Config.SynthesisWorkers) is a gate of every strategy.
// The four single-gate names are today's presets.
type Strategy string

// The gates, each also a preset strategy of its own.
const (
	// Release: a partition permit (one of PartitionWorkers) is taken before
	// synthesis and released right after it. Finished partitions then wait
	// to send on a full channel, each holding its whole dataset: the pile-up
	// that ran the seed out of memory.
	Release Strategy = "release"
	// Hold: the permit is held until the channel has accepted the partition.
	Hold Strategy = "hold"
	// Budget: admission reserves the dataset's bytes before synthesis; the
	// a/b/c bytes come back at the early free (or at dealloc without it), the
	// rest at dealloc. Live dataset bytes never exceed Config.Budget.
	Budget Strategy = "budget"
	// Pacer: admission is paced by a feedback controller that keeps the GPU
	// queue (partitions synthesized and not yet taken by a GPU worker) at a
	// target depth; see the package documentation for the control law.
	Pacer Strategy = "pacer"
)

// Strategies lists the gates, in the order a composed name writes them.
var Strategies = []Strategy{Release, Hold, Budget, Pacer}

// StrategyNames lists every valid strategy: each gate alone (the
// presets), then every composition of them.
func StrategyNames() []string {
	var names []string
	for _, g := range Strategies {
		names = append(names, string(g))
	}
	for _, permits := range []Strategy{"", Release, Hold} {
		for _, budget := range []Strategy{"", Budget} {
			for _, pacer := range []Strategy{"", Pacer} {
				var parts []string
				for _, g := range []Strategy{permits, budget, pacer} {
					if g != "" {
						parts = append(parts, string(g))
					}
				}
				if len(parts) > 1 {
					names = append(names, strings.Join(parts, "+"))
				}
			}
		}
	}
	return names
}

// Gates splits s into its gates, checking that it names a valid
// composition.
func (s Strategy) Gates() ([]Strategy, error) {
	if !slices.Contains(StrategyNames(), string(s)) {
		return nil, fmt.Errorf("%q is not one of %s", s, strings.Join(StrategyNames(), ", "))
	}
	var gates []Strategy
	for part := range strings.SplitSeq(string(s), "+") {
		gates = append(gates, Strategy(part))
	}
	return gates, nil
}

// Has reports whether s composes gate g.
func (s Strategy) Has(g Strategy) bool {
	for part := range strings.SplitSeq(string(s), "+") {
		if Strategy(part) == g {
			return true
		}
	}
	return false
}

// UsesPermits reports whether s has a permit gate (release or hold).
func (s Strategy) UsesPermits() bool { return s.Has(Release) || s.Has(Hold) }
