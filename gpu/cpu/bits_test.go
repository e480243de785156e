package cpu

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// TestSplitMSMEqualsMultiExp checks the split MSM against one gnark-crypto
// MultiExp, in G1 and G2, for scalars that are mostly bits with a few
// full-width values among the bits (which the circuit never makes, but a
// tampered dataset can) and points at infinity.
func TestSplitMSMEqualsMultiExp(t *testing.T) {
	const n, full = 9000, 3001
	_, _, g1, g2 := bls12381.Generators()
	scalars := make([]fr.Element, n)
	mults := make([]fr.Element, n)
	for i := range scalars {
		switch {
		case i < full || i%997 == 0:
			scalars[i].SetRandom()
		case i%3 == 0:
			scalars[i].SetOne()
		}
		mults[i].SetUint64(uint64(i) + 1)
	}
	p1 := bls12381.BatchScalarMultiplicationG1(&g1, mults)
	p2 := bls12381.BatchScalarMultiplicationG2(&g2, mults)
	p1[full+5] = bls12381.G1Affine{}
	cfg := ecc.MultiExpConfig{NbTasks: 2}

	var got1, want1 bls12381.G1Jac
	if err := splitMSM(&got1, p1, scalars, full, cfg, 3, (*bls12381.G1Jac).MultiExp); err != nil {
		t.Fatal(err)
	}
	if _, err := want1.MultiExp(p1, scalars, cfg); err != nil {
		t.Fatal(err)
	}
	if !got1.Equal(&want1) {
		t.Error("G1: split MSM differs from MultiExp")
	}
	var got2, want2 bls12381.G2Jac
	if err := splitMSM(&got2, p2, scalars, full, cfg, 3, (*bls12381.G2Jac).MultiExp); err != nil {
		t.Fatal(err)
	}
	if _, err := want2.MultiExp(p2, scalars, cfg); err != nil {
		t.Fatal(err)
	}
	if !got2.Equal(&want2) {
		t.Error("G2: split MSM differs from MultiExp")
	}
}
