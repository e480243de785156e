// Package shape is the size of what the prover works on, without the
// field arithmetic: the members of the circuit family (Params: their
// constraints, wires and bits), a partition's dataset bytes, and a proving
// key's kind and bytes. The configuration vocabulary (pipeline/config),
// spec and the scenario loader read these, so they link no prover;
// gpu/circuit synthesizes a member and gpu/groth16 makes its keys, and their
// tests hold the sizes here equal to the curve's.
package shape

import (
	"fmt"
	"math"
	"math/bits"
)

// Sizes of BLS12-381's elements in memory: a scalar (fr.Bytes), and the
// uncompressed affine points of G1 and G2 (gpu/groth16's test holds them
// to gnark-crypto's).
const (
	ElementBytes = 32
	G1Bytes      = 96
	G2Bytes      = 192
)

// NumPublic is the number of public inputs (not counting the one wire).
const NumPublic = 2

// Domain size limits, as powers of two. 2^27 is the size of a 32 GiB PoRep
// partition; the lower bound keeps the chain at least a few steps long.
const (
	MinLogConstraints = 5
	MaxLogConstraints = 27
	// MaxRounds bounds the synthesis knob (each round is three field
	// multiplications per constraint).
	MaxRounds = 10000
)

// Bit fraction limits, in thousandths of the private wires. Above 95% a
// mixing step would consume more than 19 bits: the chain gets too short to
// stand in for a circuit; below 5% there is nothing to split.
const (
	DefaultBitsPerMille = 500
	MinBitsPerMille     = 50
	MaxBitsPerMille     = 950
)

// Params selects one member of the family.
type Params struct {
	// Constraints is the number of constraints, which is also the domain
	// size N: a power of two.
	Constraints int `json:"constraints"`
	// Rounds of the x^5+c S-box spent per constraint deriving the advice.
	Rounds int `json:"rounds"`
	// BitsPerMille is the share of private wires that are bits, in
	// thousandths; 0 means DefaultBitsPerMille.
	BitsPerMille int `json:"bits_per_mille,omitempty"`
}

// Validate reports why p does not describe a circuit of the family.
func (p Params) Validate() error {
	n := p.Constraints
	if n <= 0 || n&(n-1) != 0 {
		return fmt.Errorf("constraints %d is not a power of two", n)
	}
	if lg := bits.TrailingZeros(uint(n)); lg < MinLogConstraints || lg > MaxLogConstraints {
		return fmt.Errorf("constraints 2^%d is outside 2^%d..2^%d", lg, MinLogConstraints, MaxLogConstraints)
	}
	if p.Rounds < 0 || p.Rounds > MaxRounds {
		return fmt.Errorf("rounds %d is outside 0..%d", p.Rounds, MaxRounds)
	}
	if p.BitsPerMille != 0 {
		return checkBitsPerMille(p.BitsPerMille, float64(p.BitsPerMille)/1000)
	}
	return nil
}

// BitsPerMilleFor is a bit fraction (0.05..0.95) as Params.BitsPerMille,
// rounded to a thousandth, or why the family has no such member.
func BitsPerMilleFor(fraction float64) (int, error) {
	b := int(math.Round(fraction * 1000))
	return b, checkBitsPerMille(b, fraction)
}

func checkBitsPerMille(b int, fraction float64) error {
	if b < MinBitsPerMille || b > MaxBitsPerMille {
		return fmt.Errorf("bit fraction %v is outside %.2f..%.2f", fraction,
			float64(MinBitsPerMille)/1000, float64(MaxBitsPerMille)/1000)
	}
	return nil
}

// LogConstraints is log2 of the domain size.
func (p Params) LogConstraints() int { return bits.TrailingZeros(uint(p.Constraints)) }

// EffectiveBitsPerMille is the bit fraction in thousandths with the default
// applied: what identifies the circuit (and so its keys).
func (p Params) EffectiveBitsPerMille() int {
	if p.BitsPerMille == 0 {
		return DefaultBitsPerMille
	}
	return p.BitsPerMille
}

// BitFraction is the share of private wires that are bits.
func (p Params) BitFraction() float64 { return float64(p.EffectiveBitsPerMille()) / 1000 }

// Steps is the number of step constraints (the ones that make a wire).
func (p Params) Steps() int { return p.Constraints - (NumPublic + 1) - 1 }

// bitsBefore is how many of the first j steps are bit steps.
func (p Params) bitsBefore(j int) int { return (j*p.EffectiveBitsPerMille() + 500) / 1000 }

// IsBitStep reports whether step j makes a bit.
func (p Params) IsBitStep(j int) bool { return p.bitsBefore(j+1) > p.bitsBefore(j) }

// NumBits is the number of bit wires.
func (p Params) NumBits() int { return p.bitsBefore(p.Steps()) }

// NumWires is the length of the assignment: one, the public inputs and one
// private wire per step.
func (p Params) NumWires() int { return 1 + NumPublic + p.Steps() }

// NumPrivate is the number of private wires.
func (p Params) NumPrivate() int { return p.Steps() }

// BitWires is the first bit wire: wires [0, BitWires()) are full-width
// (the one wire, the inputs, the chain states), wires [BitWires(),
// NumWires()) are bits, 0 or 1 in every satisfying assignment.
func (p Params) BitWires() int { return p.NumWires() - p.NumBits() }

// DatasetBytes is what one synthesized partition occupies: a/b/c and the
// assignment.
func (p Params) DatasetBytes() (abc, wires int64) {
	return 3 * int64(p.Constraints) * ElementBytes, int64(p.NumWires()) * ElementBytes
}

// InB reports whether wire i has a term in the B matrix: the one wire and
// the bits. Wires outside B have a point at infinity in the proving key's B
// columns.
func (p Params) InB(i int) bool { return i == 0 || i >= p.BitWires() }

// KeyBytes is the size of the point vectors of the proving key for p, as
// gpu/groth16's ProvingKey.Bytes reports it once the key exists: what it
// takes in memory and, with a small header, on disk.
func KeyBytes(p Params) int64 {
	w := int64(p.NumWires())
	return (2*w+int64(p.NumPrivate())+int64(p.Constraints-1))*G1Bytes + w*G2Bytes
}

// KeyKind tells how a proving key was made.
type KeyKind string

const (
	// KindSetup is a real Groth16 setup: proofs made with it verify.
	KindSetup KeyKind = "setup"
	// KindRandom is a benchmark key: the shapes and sizes of a real key,
	// random points. Proving costs the same; proofs do not verify.
	KindRandom KeyKind = "random"
)

// AutoSetupMax is the largest domain for which KindAuto runs a real setup:
// a real setup costs a scalar multiplication per point (seconds at 2^16 on
// two cores, minutes beyond), a benchmark key one addition.
const AutoSetupMax = 1 << 16

// KindAuto picks KindSetup up to AutoSetupMax constraints, KindRandom above.
const KindAuto KeyKind = "auto"

// Resolve turns KindAuto into a concrete kind for a domain size.
func (k KeyKind) Resolve(constraints int) KeyKind {
	if k != KindAuto {
		return k
	}
	if constraints <= AutoSetupMax {
		return KindSetup
	}
	return KindRandom
}
