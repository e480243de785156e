package config

import (
	"fmt"
	"slices"
	"strings"
)

// Strategy names the admission gates a configuration composes, joined by
// "+" in the registry's order, at most one gate of each group: one permit
// gate (release or hold), then budget, then pacer ("hold", "budget+pacer",
// "hold+budget+pacer"). The synthesis cap (Config.SynthesisWorkers) is a
// gate of every strategy. The single-gate names are the presets.
type Strategy string

// The gates, each also a preset strategy of its own. Each is described,
// with everything the rest of provebench asks about it, in gates.go and
// registered in Registered; its gate is pipeline's (gate_permits.go,
// gate_budget.go, pacer.go).
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

// StrategyDef is one gate and everything the rest of provebench asks about
// it: validation checks its fields, the pre-flight check bounds the
// datasets it lets live, the scenario schema describes it and the reports
// colour it; the engine and the simulator build it from pipeline's maker of
// the same name. Adding a gate is its StrategyDef here (gates.go) and its
// line in Registered, and its gate and maker in pipeline.
type StrategyDef struct {
	Name Strategy
	// Group is the set of gates of which a strategy composes at most one
	// (release and hold are both "permits"); empty: a group of its own.
	Group string
	// Doc says what the gate does, in a few words, for the scenario
	// schema and help texts.
	Doc string
	// Colour is the gate's index in the reports' palette: fixed, so a
	// strategy keeps its colour whatever else a run holds.
	Colour int
	// Validate adds to errs the problems with the fields the gate uses,
	// for a strategy that has it and partitions of abc and wires bytes.
	Validate func(c Config, abc, wires int64, errs *fieldErrors)
	// ValidateWritten, where set, checks c as a scenario wrote it, before
	// Resolved fills in defaults that would hide a mistake.
	ValidateWritten func(c Config, errs *fieldErrors)
	// Bound is the most partitions' datasets the gate lets live at once
	// and what limits them, for datasets of dataset bytes and gpuSide
	// partitions on the GPU side (in Start or finalizing); ok is false for
	// a gate that bounds nothing (release).
	Bound func(c Config, dataset, gpuSide int64) (datasets int64, why string, ok bool)
}

// Registry is a set of gates, in the order a composed name writes them.
type Registry []StrategyDef

// Registered returns the gates this pipeline has.
func Registered() Registry {
	return Registry{releaseDef(), holdDef(), budgetDef(), pacerDef()}
}

// Names lists the gates, in the order a composed name writes them.
func (r Registry) Names() []Strategy {
	names := make([]Strategy, len(r))
	for i, d := range r {
		names[i] = d.Name
	}
	return names
}

// Colours maps each gate's name to its palette index, for the reports.
func (r Registry) Colours() map[string]int {
	m := make(map[string]int, len(r))
	for _, d := range r {
		m[string(d.Name)] = d.Colour
	}
	return m
}

// Doc describes every gate: "release (...), hold (...), ...".
func (r Registry) Doc() string {
	parts := make([]string, len(r))
	for i, d := range r {
		parts[i] = fmt.Sprintf("%s (%s)", d.Name, d.Doc)
	}
	return strings.Join(parts, ", ")
}

// StrategyNames lists every valid strategy: each gate alone (the
// presets), then every composition of at least two gates of different
// groups, in registry order.
func (r Registry) StrategyNames() []string {
	var groups [][]Strategy
	at := map[string]int{}
	for _, d := range r {
		key := d.Group
		if key == "" {
			key = "=" + string(d.Name)
		}
		i, ok := at[key]
		if !ok {
			i = len(groups)
			at[key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], d.Name)
	}
	names := make([]string, 0, len(r))
	for _, n := range r.Names() {
		names = append(names, string(n))
	}
	var compose func(g int, parts []string)
	compose = func(g int, parts []string) {
		if g == len(groups) {
			if len(parts) > 1 {
				names = append(names, strings.Join(parts, "+"))
			}
			return
		}
		compose(g+1, parts)
		for _, n := range groups[g] {
			compose(g+1, append(slices.Clone(parts), string(n)))
		}
	}
	compose(0, nil)
	return names
}

// In lists the gates of r that s composes, in registry order.
func (r Registry) In(s Strategy) []StrategyDef {
	var in []StrategyDef
	for _, d := range r {
		if s.Has(d.Name) {
			in = append(in, d)
		}
	}
	return in
}

// validate checks the fields of every gate of c.Strategy, for partitions
// of abc and wires bytes.
func (r Registry) validate(c Config, abc, wires int64, errs *fieldErrors) {
	for _, d := range r.In(c.Strategy) {
		d.Validate(c, abc, wires, errs)
	}
}

// validateWritten runs the ValidateWritten rules of c.Strategy's gates on
// c as written (before Resolved).
func (r Registry) validateWritten(c Config, errs *fieldErrors) {
	for _, d := range r.In(c.Strategy) {
		if d.ValidateWritten != nil {
			d.ValidateWritten(c, errs)
		}
	}
}

// Bound is the tightest of the bounds of c.Strategy's gates on the
// partitions' datasets live at once, and what sets it; ok is false when
// no gate bounds them (release alone).
func (r Registry) Bound(c Config, dataset, gpuSide int64) (datasets int64, why string, ok bool) {
	for _, d := range r.In(c.Strategy) {
		if n, w, has := d.Bound(c, dataset, gpuSide); has && (!ok || n < datasets) {
			datasets, why, ok = n, w, true
		}
	}
	return datasets, why, ok
}

// StrategyNames lists every valid strategy of the registered gates.
func StrategyNames() []string { return Registered().StrategyNames() }

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
