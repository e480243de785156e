// Package groth16 holds the Groth16 keys and proofs over BLS12-381, their
// setup (a real one and a fast benchmark one), the on-disk key cache, proof
// assembly, verification and the snarkjs export.
//
// The provers themselves (CPU and CUDA) live in their own packages; they
// compute the MSMs and the quotient and hand the sums to Assemble.
package groth16

import (
	"errors"
	"fmt"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/hostmem"
	"github.com/provebench/provebench/gpu/shape"
)

// KeyKind tells how a proving key was made; the kinds are gpu/shape's,
// which a scenario names without linking this package.
type KeyKind = shape.KeyKind

// The kinds of key (gpu/shape).
const (
	KindSetup  = shape.KindSetup
	KindRandom = shape.KindRandom
	KindAuto   = shape.KindAuto
)

// ProvingKey is a Groth16 proving key for one domain size of the circuit
// family. Its point vectors may live in a read-only file mapping (see
// LoadKey); Close releases it.
type ProvingKey struct {
	Kind KeyKind
	// Domain is the domain size N (the number of constraints).
	Domain    int
	NumWires  int
	NumPublic int
	// BitsPerMille is the circuit's bit fraction in thousandths (see
	// circuit.Params): it decides which wires are bits, and so the key.
	BitsPerMille int

	Alpha1, Beta1, Delta1 bls12381.G1Affine
	Beta2, Delta2         bls12381.G2Affine

	// A, B1 and B2 have one point per wire; L one per private wire; H one
	// per coefficient of the quotient (N-1).
	A, B1, L, H []bls12381.G1Affine
	B2          []bls12381.G2Affine

	backing *hostmem.Buffer
}

// VerifyingKey is the matching verifying key; IC has one point per public
// wire, the one wire first.
type VerifyingKey struct {
	Alpha1                bls12381.G1Affine
	Beta2, Gamma2, Delta2 bls12381.G2Affine
	IC                    []bls12381.G1Affine
}

// Proof is a Groth16 proof.
type Proof struct {
	Ar  bls12381.G1Affine
	Bs  bls12381.G2Affine
	Krs bls12381.G1Affine
}

// Verifiable reports whether proofs made with the key can verify.
func (pk *ProvingKey) Verifiable() bool { return pk.Kind == KindSetup }

// Params is the circuit size the key was made for.
func (pk *ProvingKey) Params() circuit.Params {
	return circuit.Params{Constraints: pk.Domain, BitsPerMille: pk.BitsPerMille}
}

// Bytes is the size of the key's point vectors.
func (pk *ProvingKey) Bytes() int64 {
	return int64(len(pk.A)+len(pk.B1)+len(pk.L)+len(pk.H))*bls12381.SizeOfG1AffineUncompressed +
		int64(len(pk.B2))*bls12381.SizeOfG2AffineUncompressed
}

// KeyBytes is the size of the point vectors of the proving key for p
// (gpu/shape, whose sizes TestShapeSizes holds to the curve's).
func KeyBytes(p circuit.Params) int64 { return shape.KeyBytes(p) }

// CheckShape verifies that the key fits the circuit of its domain size.
func (pk *ProvingKey) CheckShape() error {
	p := pk.Params()
	if err := p.Validate(); err != nil {
		return fmt.Errorf("proving key: %w", err)
	}
	w := p.NumWires()
	switch {
	case pk.NumWires != w || pk.NumPublic != circuit.NumPublic:
		return fmt.Errorf("proving key: %d wires, %d public; circuit 2^%d has %d, %d",
			pk.NumWires, pk.NumPublic, p.LogConstraints(), w, circuit.NumPublic)
	case len(pk.A) != w || len(pk.B1) != w || len(pk.B2) != w:
		return errors.New("proving key: A/B vectors do not have one point per wire")
	case len(pk.L) != p.NumPrivate():
		return errors.New("proving key: L does not have one point per private wire")
	case len(pk.H) != pk.Domain-1:
		return errors.New("proving key: H does not have N-1 points")
	}
	return nil
}

// MappingAddr is the start address of the key's file mapping, and false
// when the key's points live in the Go heap instead (a key made in memory).
func (pk *ProvingKey) MappingAddr() (uintptr, bool) {
	if pk.backing == nil {
		return 0, false
	}
	a := pk.backing.Addr()
	return a, a != 0
}

// Close releases the key's file mapping, if it has one. The key must not be
// used afterwards.
func (pk *ProvingKey) Close() error {
	if pk.backing == nil {
		return nil
	}
	_, err := pk.backing.Free()
	pk.A, pk.B1, pk.B2, pk.L, pk.H = nil, nil, nil, nil, nil
	return err
}
