//go:build cuda

package cuda

import (
	"fmt"
	"math/big"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	icicle381 "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381"
)

// gnark-crypto's fr.Element, G1Affine and G2Affine have ICICLE's memory
// layout (little-endian limbs, x then y, an extension element's c0 then c1),
// so vectors go to the device as they are. What differs is the
// representation: gnark-crypto keeps Montgomery form, ICICLE's kernels
// compute on canonical integers and return canonical results.

// Sizes of ICICLE's points: projective (X, Y, Z), the form MSMs return, and
// affine (precomputed bases).
const (
	g1ProjectiveBytes = 3 * fp.Bytes
	g1AffineBytes     = 2 * fp.Bytes
	g2ProjectiveBytes = 6 * fp.Bytes
)

// scalarField is e's value as an ICICLE scalar (canonical form).
func scalarField(e *fr.Element) icicle381.ScalarField {
	words := e.Bits() // canonical, little-endian 64-bit words
	limbs := make([]uint32, 0, 2*len(words))
	for _, w := range words {
		limbs = append(limbs, uint32(w), uint32(w>>32))
	}
	var s icicle381.ScalarField
	s.FromLimbs(limbs)
	return s
}

// scalarLimbs is e's value as the limbs of an NTT configuration's coset
// generator.
func scalarLimbs(e *fr.Element) [icicle381.SCALAR_LIMBS]uint32 {
	var out [icicle381.SCALAR_LIMBS]uint32
	copy(out[:], scalarField(e).GetLimbs())
	return out
}

// montgomeryR is R = 2^256 mod r, the factor between an fr.Element's value
// and its representation.
func montgomeryR() fr.Element {
	var r fr.Element
	r.SetBigInt(new(big.Int).Lsh(big.NewInt(1), 8*fr.Bytes))
	return r
}

// baseElement reads a canonical little-endian base field element.
func baseElement(raw []byte) (fp.Element, error) {
	var b [fp.Bytes]byte
	copy(b[:], raw)
	e, err := fp.LittleEndian.Element(&b)
	if err != nil {
		return fp.Element{}, fmt.Errorf("device returned a non-canonical coordinate: %w", err)
	}
	return e, nil
}

// g1FromProjective reads an ICICLE G1 projective point (x = X/Z, y = Y/Z)
// as gnark-crypto Jacobian coordinates (x = X'/Z'^2, y = Y'/Z'^3):
// X' = X*Z, Y' = Y*Z^2, Z' = Z.
func g1FromProjective(raw []byte) (bls12381.G1Jac, error) {
	var c [3]fp.Element
	for i := range c {
		e, err := baseElement(raw[i*fp.Bytes : (i+1)*fp.Bytes])
		if err != nil {
			return bls12381.G1Jac{}, err
		}
		c[i] = e
	}
	var p bls12381.G1Jac
	if c[2].IsZero() {
		p.X.SetOne()
		p.Y.SetOne()
		return p, nil
	}
	var z2 fp.Element
	z2.Square(&c[2])
	p.X.Mul(&c[0], &c[2])
	p.Y.Mul(&c[1], &z2)
	p.Z = c[2]
	return p, nil
}

// g2FromProjective is g1FromProjective over the quadratic extension.
func g2FromProjective(raw []byte) (bls12381.G2Jac, error) {
	var c [3]bls12381.E2
	for i := range c {
		off := i * 2 * fp.Bytes
		a0, err := baseElement(raw[off : off+fp.Bytes])
		if err != nil {
			return bls12381.G2Jac{}, err
		}
		a1, err := baseElement(raw[off+fp.Bytes : off+2*fp.Bytes])
		if err != nil {
			return bls12381.G2Jac{}, err
		}
		c[i].A0, c[i].A1 = a0, a1
	}
	var p bls12381.G2Jac
	if c[2].IsZero() {
		p.X.SetOne()
		p.Y.SetOne()
		return p, nil
	}
	var z2 bls12381.E2
	z2.Square(&c[2])
	p.X.Mul(&c[0], &c[2])
	p.Y.Mul(&c[1], &z2)
	p.Z = c[2]
	return p, nil
}
