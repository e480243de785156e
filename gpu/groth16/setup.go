package groth16

import (
	"crypto/rand"
	"fmt"
	"io"
	"math/big"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/provebench/provebench/gpu/circuit"
)

// randomScalar draws a uniform non-zero scalar from rng.
func randomScalar(rng io.Reader) (fr.Element, error) {
	if rng == nil {
		rng = rand.Reader
	}
	for {
		k, err := rand.Int(rng, fr.Modulus())
		if err != nil {
			return fr.Element{}, err
		}
		if k.Sign() != 0 {
			var e fr.Element
			e.SetBigInt(k)
			return e, nil
		}
	}
}

// toxicWaste is the secret randomness of a setup; it is discarded once the
// keys exist.
type toxicWaste struct{ tau, alpha, beta, gamma, delta fr.Element }

// Setup runs a real Groth16 setup for the circuit of size p with fresh
// randomness from rng (crypto/rand if nil). Its cost is a handful of
// fixed-base scalar multiplications per wire: seconds at 2^16, which is where
// KeyAuto switches to benchmark keys.
func Setup(p circuit.Params, rng io.Reader) (*ProvingKey, *VerifyingKey, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	var tw toxicWaste
	for _, e := range []*fr.Element{&tw.tau, &tw.alpha, &tw.beta, &tw.gamma, &tw.delta} {
		v, err := randomScalar(rng)
		if err != nil {
			return nil, nil, fmt.Errorf("setup: draw toxic waste: %w", err)
		}
		*e = v
	}
	n := p.Constraints
	nWires := p.NumWires()

	// Lagrange basis at tau: L_j(tau) = (tau^N - 1)/N * w^j / (tau - w^j).
	dom := fft.NewDomain(uint64(n))
	var zTau fr.Element
	zTau.Exp(tw.tau, big.NewInt(int64(n)))
	var one fr.Element
	one.SetOne()
	zTau.Sub(&zTau, &one)
	if zTau.IsZero() {
		return nil, nil, fmt.Errorf("setup: tau is in the domain; draw again")
	}
	omegas := make([]fr.Element, n)
	den := make([]fr.Element, n)
	omegas[0].SetOne()
	for j := 1; j < n; j++ {
		omegas[j].Mul(&omegas[j-1], &dom.Generator)
	}
	for j := range den {
		den[j].Sub(&tw.tau, &omegas[j])
	}
	den = fr.BatchInvert(den)
	var scale fr.Element
	scale.Mul(&zTau, &dom.CardinalityInv)
	lagrange := omegas // reuse
	for j := range lagrange {
		lagrange[j].Mul(&omegas[j], &den[j]).Mul(&lagrange[j], &scale)
	}

	// QAP columns at tau.
	u := make([]fr.Element, nWires)
	v := make([]fr.Element, nWires)
	w := make([]fr.Element, nWires)
	cols := [3][]fr.Element{u, v, w}
	p.Terms(func(t circuit.Term) {
		var x fr.Element
		x.Mul(&t.Coeff, &lagrange[t.Constraint])
		cols[t.Matrix][t.Wire].Add(&cols[t.Matrix][t.Wire], &x)
	})

	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&tw.gamma)
	deltaInv.Inverse(&tw.delta)
	// K_i = (beta u_i + alpha v_i + w_i) / (gamma for public, delta for private)
	nPub := 1 + circuit.NumPublic
	k := make([]fr.Element, nWires)
	for i := range k {
		var t fr.Element
		k[i].Mul(&tw.beta, &u[i])
		t.Mul(&tw.alpha, &v[i])
		k[i].Add(&k[i], &t).Add(&k[i], &w[i])
		if i < nPub {
			k[i].Mul(&k[i], &gammaInv)
		} else {
			k[i].Mul(&k[i], &deltaInv)
		}
	}
	// H_i = tau^i Z(tau) / delta, i < N-1
	hs := make([]fr.Element, n-1)
	hs[0].Mul(&zTau, &deltaInv)
	for i := 1; i < len(hs); i++ {
		hs[i].Mul(&hs[i-1], &tw.tau)
	}

	_, _, g1, g2 := bls12381.Generators()
	pk := &ProvingKey{
		Kind:         KindSetup,
		BitsPerMille: p.EffectiveBitsPerMille(),
		Domain:       n,
		NumWires:     nWires,
		NumPublic:    circuit.NumPublic,
		A:            bls12381.BatchScalarMultiplicationG1(&g1, u),
		B1:           bls12381.BatchScalarMultiplicationG1(&g1, v),
		B2:           bls12381.BatchScalarMultiplicationG2(&g2, v),
		L:            bls12381.BatchScalarMultiplicationG1(&g1, k[nPub:]),
		H:            bls12381.BatchScalarMultiplicationG1(&g1, hs),
	}
	fixed1 := bls12381.BatchScalarMultiplicationG1(&g1, []fr.Element{tw.alpha, tw.beta, tw.delta})
	fixed2 := bls12381.BatchScalarMultiplicationG2(&g2, []fr.Element{tw.beta, tw.gamma, tw.delta})
	pk.Alpha1, pk.Beta1, pk.Delta1 = fixed1[0], fixed1[1], fixed1[2]
	pk.Beta2, pk.Delta2 = fixed2[0], fixed2[2]
	vk := &VerifyingKey{
		Alpha1: pk.Alpha1,
		Beta2:  pk.Beta2,
		Gamma2: fixed2[1],
		Delta2: pk.Delta2,
		IC:     bls12381.BatchScalarMultiplicationG1(&g1, k[:nPub]),
	}
	return pk, vk, nil
}
