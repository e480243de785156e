package config

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/provebench/provebench/gpu/shape"
)

// FieldError is a problem with one configuration field. Field is the path
// of the field as a scenario file writes it ("workload.proofs",
// "pipeline.pacer.kp", "pipeline.budget"), so a loader can point at the
// line that set it.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Resolved returns c with its zero-means-default fields filled in:
// SynthesisWorkers (PartitionWorkers with a permit gate, else GOMAXPROCS)
// and, with a pacer gate, the pacer's defaults. It does not validate; call
// Validate on the result.
func (c Config) Resolved() Config {
	if c.SynthesisWorkers == 0 {
		if c.Strategy.UsesPermits() {
			c.SynthesisWorkers = c.PartitionWorkers
		} else {
			c.SynthesisWorkers = runtime.GOMAXPROCS(0)
		}
	}
	if c.Strategy.Has(Pacer) {
		c.Pacer = c.Pacer.resolved(c.SynthesisWorkers)
	}
	return c
}

// Validate checks a workload on its own. The error joins one *FieldError
// per problem.
func (w Workload) Validate() error {
	var errs fieldErrors
	if err := (shape.Params{Constraints: w.Constraints}).Validate(); err != nil {
		errs.add("workload.constraints", "%v", err)
	}
	if err := (shape.Params{Constraints: 1 << shape.MinLogConstraints, Rounds: w.SynthesisRounds}).Validate(); err != nil {
		errs.add("workload.synthesis_rounds", "%v", err)
	}
	if w.BitFraction != 0 {
		if _, err := shape.BitsPerMilleFor(w.BitFraction); err != nil {
			errs.add("workload.bit_fraction", "%v", err)
		}
	}
	if w.Synthesis != "" && !slices.Contains(SynthesisModes, w.Synthesis) {
		errs.add("workload.synthesis", "%q is not one of %s", w.Synthesis, strings.Join(SynthesisModes, ", "))
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
	abc, wires := DatasetBytes(w)
	return c.ValidateFor(abc, wires)
}

// ValidateFor is Validate for partitions whose datasets hold abc and wires
// bytes (the simulator's, which need not be the built-in circuit's).
func (c Config) ValidateFor(abc, wires int64) error {
	var errs fieldErrors
	_, err := c.Strategy.Gates()
	if err != nil {
		errs.add("pipeline.strategy", "%v", err)
	}
	errs.atLeast("pipeline.channel_capacity", c.ChannelCapacity, 1, "")
	errs.atLeast("pipeline.gpu_workers", c.GPUWorkers, 1, "")
	errs.atLeast("pipeline.synthesis_workers", c.SynthesisWorkers, 0, "")
	// Each gate of a valid strategy checks its own fields (its
	// StrategyDef); the fields of the gates it lacks must at least not be
	// negative.
	if err == nil {
		Registered().validate(c, abc, wires, &errs)
	}
	if !errs.has("pipeline.partition_workers") {
		errs.atLeast("pipeline.partition_workers", c.PartitionWorkers, 0, "")
	}
	if !errs.has("pipeline.budget") && c.Budget < 0 {
		errs.add("pipeline.budget", "must be >= 0 (got %d)", c.Budget)
	}
	return errs.join()
}

// ValidateWritten checks c as a scenario wrote it, before Resolved: the
// rules of its gates that the defaults would hide (a pacer written with kp
// and ki both 0). The error joins one *FieldError per problem.
func (c Config) ValidateWritten() error {
	var errs fieldErrors
	Registered().validateWritten(c, &errs)
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

// has reports whether a problem with field was already found.
func (e fieldErrors) has(field string) bool {
	for _, err := range e {
		if fe, ok := err.(*FieldError); ok && fe.Field == field {
			return true
		}
	}
	return false
}

// DatasetBytes is what the budget gate reserves per partition of w: the
// a/b/c vectors and the wires of the built-in circuit.
func DatasetBytes(w Workload) (abc, wires int64) {
	return w.Circuit().DatasetBytes()
}
