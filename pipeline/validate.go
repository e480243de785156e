package pipeline

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/provebench/provebench/gpu/circuit"
)

// FieldError is a problem with one configuration field. Field is the path
// of the field as bench.Spec spells it in JSON and YAML ("workload.proofs",
// "pipeline.pacer.kp"), so a loader can point at the line that set it.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

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

// Resolved returns c with its zero-means-default fields filled in:
// SynthesisWorkers (PartitionWorkers for release and hold, GOMAXPROCS for
// budget and pacer) and, for the pacer strategy, the pacer's defaults. It
// does not validate; call Validate on the result.
func (c Config) Resolved() Config {
	if c.SynthesisWorkers == 0 {
		switch c.Strategy {
		case Release, Hold:
			c.SynthesisWorkers = c.PartitionWorkers
		default:
			c.SynthesisWorkers = runtime.GOMAXPROCS(0)
		}
	}
	if c.Strategy == Pacer {
		d := DefaultPacerConfig()
		p := &c.Pacer
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
			p.MaxInFlight = max(c.SynthesisWorkers, 0) + 2*int(math.Ceil(p.TargetDepth))
		}
	}
	return c
}

// Validate checks a workload on its own. The error joins one *FieldError
// per problem.
func (w Workload) Validate() error {
	var errs fieldErrors
	if err := (circuit.Params{Constraints: w.Constraints}).Validate(); err != nil {
		errs.add("workload.constraints", "%v", err)
	}
	if err := (circuit.Params{Constraints: 1 << circuit.MinLogConstraints, Rounds: w.SynthesisRounds}).Validate(); err != nil {
		errs.add("workload.synthesis_rounds", "%v", err)
	}
	if b := w.Circuit().BitsPerMille; w.BitFraction != 0 && (b < circuit.MinBitsPerMille || b > circuit.MaxBitsPerMille) {
		errs.add("workload.bit_fraction", "%v is outside %.2f..%.2f", w.BitFraction,
			float64(circuit.MinBitsPerMille)/1000, float64(circuit.MaxBitsPerMille)/1000)
	}
	errs.atLeast("workload.partitions", w.Partitions, 1, "")
	errs.atLeast("workload.proofs", w.Proofs, 1, "")
	errs.atLeast("workload.concurrency", w.Concurrency, 1, "")
	return errs.join()
}

// Validate checks c (after Resolved) for workload w: every field the chosen
// strategy uses must make sense, and the fields it ignores must at least
// not be negative. The error joins one *FieldError per problem.
func (c Config) Validate(w Workload) error {
	var errs fieldErrors
	if !slices.Contains(Strategies, c.Strategy) {
		names := make([]string, len(Strategies))
		for i, s := range Strategies {
			names[i] = string(s)
		}
		errs.add("pipeline.strategy", "%q is not one of %s", c.Strategy, strings.Join(names, ", "))
	}
	usesPermits := c.Strategy == Release || c.Strategy == Hold
	if usesPermits {
		errs.atLeast("pipeline.partition_workers", c.PartitionWorkers, 1, " for strategy "+string(c.Strategy))
	} else {
		errs.atLeast("pipeline.partition_workers", c.PartitionWorkers, 0, "")
	}
	errs.atLeast("pipeline.channel_capacity", c.ChannelCapacity, 1, "")
	errs.atLeast("pipeline.gpu_workers", c.GPUWorkers, 1, "")
	errs.atLeast("pipeline.synthesis_workers", c.SynthesisWorkers, 0, "")

	if c.Strategy == Budget {
		abc, wires := w.Circuit().DatasetBytes()
		if need := abc + wires; c.BudgetBytes < need {
			errs.add("pipeline.budget_bytes", "%d bytes cannot hold one partition's dataset of %d bytes (a/b/c %d + wires %d) for strategy budget",
				c.BudgetBytes, need, abc, wires)
		}
	} else if c.BudgetBytes < 0 {
		errs.add("pipeline.budget_bytes", "must be >= 0 (got %d)", c.BudgetBytes)
	}

	if c.Strategy == Pacer {
		p := c.Pacer
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
	return errs.join()
}

// fieldErrors collects the problems of one validation.
type fieldErrors []error

func (e *fieldErrors) add(field, format string, args ...any) {
	*e = append(*e, &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)})
}

func (e *fieldErrors) atLeast(field string, v, min int, context string) {
	if v < min {
		e.add(field, "must be >= %d%s (got %d)", min, context, v)
	}
}

func (e fieldErrors) join() error { return errors.Join(e...) }
