package groth16

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ErrInvalidProof is returned when the pairing check fails.
var ErrInvalidProof = errors.New("groth16: proof does not verify")

// Verify checks e(Ar, Bs) = e(alpha, beta) e(IC(x), gamma) e(Krs, delta) for
// the public inputs x (without the one wire).
func Verify(vk *VerifyingKey, public []fr.Element, p *Proof) error {
	if len(public)+1 != len(vk.IC) {
		return fmt.Errorf("groth16: %d public inputs, verifying key expects %d", len(public), len(vk.IC)-1)
	}
	for _, pt := range []*bls12381.G1Affine{&p.Ar, &p.Krs} {
		if !pt.IsInSubGroup() {
			return fmt.Errorf("%w: G1 element not in the subgroup", ErrInvalidProof)
		}
	}
	if !p.Bs.IsInSubGroup() {
		return fmt.Errorf("%w: G2 element not in the subgroup", ErrInvalidProof)
	}
	var ic bls12381.G1Jac
	if _, err := ic.MultiExp(vk.IC[1:], public, ecc.MultiExpConfig{NbTasks: 1}); err != nil {
		return fmt.Errorf("groth16: input commitment: %w", err)
	}
	ic.AddMixed(&vk.IC[0])
	var icAff, negAlpha, negIC, negKrs bls12381.G1Affine
	icAff.FromJacobian(&ic)
	negAlpha.Neg(&vk.Alpha1)
	negIC.Neg(&icAff)
	negKrs.Neg(&p.Krs)
	ok, err := bls12381.PairingCheck(
		[]bls12381.G1Affine{p.Ar, negAlpha, negIC, negKrs},
		[]bls12381.G2Affine{p.Bs, vk.Beta2, vk.Gamma2, vk.Delta2},
	)
	if err != nil {
		return fmt.Errorf("groth16: pairing: %w", err)
	}
	if !ok {
		return ErrInvalidProof
	}
	return nil
}
