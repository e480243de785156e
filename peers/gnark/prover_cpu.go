//go:build !icicle

package main

import (
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
)

// proverName names this build's prover in results and benchmarks.
const proverName = "gnark-cpu"

// cpuProver is gnark's Groth16 prover on the CPU (gnark-crypto).
type cpuProver struct {
	ccs constraint.ConstraintSystem
	pk  groth16.ProvingKey
}

func newProver(_ *options) (prover, error) { return &cpuProver{}, nil }

func (p *cpuProver) setup(ccs constraint.ConstraintSystem, real bool) (groth16.VerifyingKey, error) {
	p.ccs = ccs
	if !real {
		pk, err := groth16.DummySetup(ccs)
		p.pk = pk
		return nil, err
	}
	pk, vk, err := groth16.Setup(ccs)
	p.pk = pk
	return vk, err
}

func (p *cpuProver) prove(w witness.Witness) (groth16.Proof, error) {
	return groth16.Prove(p.ccs, p.pk, w)
}

func (p *cpuProver) deviceMemory() (used, total uint64, ok bool) { return 0, 0, false }

func (p *cpuProver) close() {}
