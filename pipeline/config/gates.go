package config

import (
	"math"
	"time"
)

// The registered gates' vocabulary: what each is called, what it checks
// and what it bounds. Their gates are pipeline's (gate_permits.go,
// gate_budget.go, pacer.go).

// releaseDef registers release: the permit comes back when synthesis
// ends, so nothing but the batch bounds the finished partitions waiting
// to send.
func releaseDef() StrategyDef {
	d := permitDef(Release, 0, "permit released after synthesis: finished partitions pile up on a full channel")
	d.Bound = func(Config, int64, int64) (int64, string, bool) { return 0, "", false }
	return d
}

// holdDef registers hold: the permit comes back when the channel has taken
// the partition, so the permits, the channel and the GPU side bound the
// live datasets.
func holdDef() StrategyDef {
	d := permitDef(Hold, 1, "permit held until the channel accepts")
	d.Bound = func(c Config, _, gpuSide int64) (int64, string, bool) {
		return int64(c.PartitionWorkers+c.ChannelCapacity) + gpuSide, "held permits + channel + GPU workers", true
	}
	return d
}

// permitDef is what release and hold share: the permits group and the
// check of pw.
func permitDef(name Strategy, colour int, doc string) StrategyDef {
	return StrategyDef{
		Name: name, Group: "permits", Colour: colour, Doc: doc,
		Validate: validatePermits,
	}
}

// validatePermits checks pw for a strategy with a permit gate: at least 1.
func validatePermits(c Config, _, _ int64, errs *fieldErrors) {
	if c.PartitionWorkers < 1 {
		errs.add("pipeline.partition_workers", "%d is too few: the %s strategy needs at least 1 partition permit", c.PartitionWorkers, c.Strategy)
	}
}

// budgetDef registers the byte budget: it bounds the live datasets by
// itself, whatever the other gates do.
func budgetDef() StrategyDef {
	return StrategyDef{
		Name: Budget, Colour: 2,
		Doc:      "admission reserves the dataset's bytes",
		Validate: validateBudget,
		Bound: func(c Config, dataset, _ int64) (int64, string, bool) {
			if dataset <= 0 {
				return 0, "", false
			}
			return c.Budget / dataset, "the byte budget", true
		},
	}
}

// validateBudget checks that the budget holds one partition's dataset of
// abc and wires bytes.
func validateBudget(c Config, abc, wires int64, errs *fieldErrors) {
	if need := abc + wires; c.Budget < need {
		errs.add("pipeline.budget", "%d bytes cannot hold one partition's dataset of %d bytes (a/b/c %d + wires %d) for strategy budget",
			c.Budget, need, abc, wires)
	}
}

// pacerDef registers the pacer: MaxInFlight caps what it admits ahead of
// the GPU, so that cap, the channel and the GPU side bound the live
// datasets.
func pacerDef() StrategyDef {
	return StrategyDef{
		Name: Pacer, Colour: 3,
		Doc:      "admission paced to hold the GPU queue at a target depth",
		Validate: func(c Config, _, _ int64, errs *fieldErrors) { c.Pacer.validate(errs) },
		ValidateWritten: func(c Config, errs *fieldErrors) {
			if c.Pacer.Kp == 0 && c.Pacer.Ki == 0 {
				// Resolved would take both zeros for "the defaults".
				errs.add("pipeline.pacer.kp", "kp and ki are both 0: a controller without feedback cannot hold its target")
			}
		},
		Bound: func(c Config, _, gpuSide int64) (int64, string, bool) {
			return int64(c.Pacer.MaxInFlight+c.ChannelCapacity) + gpuSide, "max_in_flight + channel + GPU workers", true
		},
	}
}

// Pacer defaults (see DefaultPacerConfig).
const (
	DefaultTargetDepth   = 2
	DefaultKp            = 0.1
	DefaultKi            = 0.01
	DefaultPacerInterval = 20 * time.Millisecond
	// MinPacerInterval bounds the control period from below: a faster
	// controller only burns CPU, the queue cannot move faster than a
	// partition's GPU time.
	MinPacerInterval = time.Millisecond
)

// DefaultPacerConfig returns the pacer defaults. MaxInFlight stays 0: its
// default depends on the synthesis workers (see Config.Resolved).
func DefaultPacerConfig() PacerConfig {
	return PacerConfig{
		TargetDepth: DefaultTargetDepth,
		Kp:          DefaultKp,
		Ki:          DefaultKi,
		Interval:    DefaultPacerInterval,
	}
}

// resolved fills the zero fields of p with the defaults (Kp and Ki only
// when both are zero); MaxInFlight defaults to the synthesis workers plus
// twice the target depth, rounded up.
func (p PacerConfig) resolved(synthWorkers int) PacerConfig {
	d := DefaultPacerConfig()
	if p.TargetDepth == 0 {
		p.TargetDepth = d.TargetDepth
	}
	if p.Kp == 0 && p.Ki == 0 {
		p.Kp, p.Ki = d.Kp, d.Ki
	}
	if p.Interval == 0 {
		p.Interval = d.Interval
	}
	if p.MaxInFlight == 0 && p.TargetDepth > 0 && !math.IsInf(p.TargetDepth, 0) {
		p.MaxInFlight = max(synthWorkers, 0) + 2*int(math.Ceil(p.TargetDepth))
	}
	return p
}

// validate checks the controller's fields.
func (p PacerConfig) validate(errs *fieldErrors) {
	if !(p.TargetDepth > 0) || math.IsInf(p.TargetDepth, 0) {
		errs.add("pipeline.pacer.target_depth", "must be a finite number > 0 (got %v)", p.TargetDepth)
	}
	for _, g := range []struct {
		field string
		v     float64
	}{{"pipeline.pacer.kp", p.Kp}, {"pipeline.pacer.ki", p.Ki}} {
		if !(g.v >= 0) || math.IsInf(g.v, 0) {
			errs.add(g.field, "must be a finite number >= 0 (got %v)", g.v)
		}
	}
	if p.Interval < MinPacerInterval {
		errs.add("pipeline.pacer.interval", "must be >= %v (got %v)", MinPacerInterval, p.Interval)
	}
	if p.TargetDepth > 0 && float64(p.MaxInFlight) <= p.TargetDepth {
		errs.add("pipeline.pacer.max_in_flight", "%d cannot hold target_depth %v: it must exceed it", p.MaxInFlight, p.TargetDepth)
	}
}
