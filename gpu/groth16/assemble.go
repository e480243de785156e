package groth16

import (
	"fmt"
	"io"
	"math/big"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Sums are a partition's five MSM results, the part of a proof that the GPU
// computes:
//
//	A  = sum z_i A_i          over all wires
//	B1 = sum z_i B_i (G1)     over all wires
//	B2 = sum z_i B_i (G2)     over all wires
//	L  = sum z_i L_i          over the private wires
//	H  = sum h_i H_i          over the quotient's coefficients
type Sums struct {
	A, B1, L, H bls12381.G1Jac
	B2          bls12381.G2Jac
}

// Blinding is the prover's randomness (r, s).
type Blinding struct{ R, S fr.Element }

// NewBlinding draws r and s from rng (crypto/rand in production, a seeded
// source where a test needs two backends to agree).
func NewBlinding(rng io.Reader) (Blinding, error) {
	var b Blinding
	for _, e := range []*fr.Element{&b.R, &b.S} {
		v, err := randomScalar(rng)
		if err != nil {
			return Blinding{}, fmt.Errorf("groth16: draw blinding: %w", err)
		}
		*e = v
	}
	return b, nil
}

// Assemble turns the MSM sums into a proof:
//
//	Ar  = alpha + A + r delta                (G1)
//	Bs  = beta + B + s delta                 (G2, and in G1 for Krs)
//	Krs = L + H + s Ar + r Bs1 - r s delta   (G1)
func Assemble(pk *ProvingKey, sums *Sums, bl Blinding) Proof {
	var r, s, rs big.Int
	bl.R.BigInt(&r)
	bl.S.BigInt(&s)
	var rsE fr.Element
	rsE.Mul(&bl.R, &bl.S)
	rsE.BigInt(&rs)

	var delta1 bls12381.G1Jac
	delta1.FromAffine(&pk.Delta1)

	var ar, t bls12381.G1Jac
	ar.Set(&sums.A)
	ar.AddMixed(&pk.Alpha1)
	t.ScalarMultiplication(&delta1, &r)
	ar.AddAssign(&t)

	var bs1 bls12381.G1Jac
	bs1.Set(&sums.B1)
	bs1.AddMixed(&pk.Beta1)
	t.ScalarMultiplication(&delta1, &s)
	bs1.AddAssign(&t)

	var bs2, t2, delta2 bls12381.G2Jac
	delta2.FromAffine(&pk.Delta2)
	bs2.Set(&sums.B2)
	bs2.AddMixed(&pk.Beta2)
	t2.ScalarMultiplication(&delta2, &s)
	bs2.AddAssign(&t2)

	var krs bls12381.G1Jac
	krs.Set(&sums.L)
	krs.AddAssign(&sums.H)
	t.ScalarMultiplication(&ar, &s)
	krs.AddAssign(&t)
	t.ScalarMultiplication(&bs1, &r)
	krs.AddAssign(&t)
	t.ScalarMultiplication(&delta1, &rs)
	krs.SubAssign(&t)

	var p Proof
	p.Ar.FromJacobian(&ar)
	p.Bs.FromJacobian(&bs2)
	p.Krs.FromJacobian(&krs)
	return p
}
