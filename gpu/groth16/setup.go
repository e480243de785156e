package groth16

import (
	"context"
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

// chunked applies a batch scalar multiplication to scalars setupChunk at
// a time, checking ctx between chunks.
func chunked[P any](ctx context.Context, scalars []fr.Element, batch func([]fr.Element) []P) ([]P, error) {
	out := make([]P, 0, len(scalars))
	for start := 0; start < len(scalars); start += setupChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, batch(scalars[start:min(start+setupChunk, len(scalars))])...)
	}
	return out, nil
}

// toxicWaste is the secret randomness of a setup; it is discarded once the
// keys exist.
type toxicWaste struct{ tau, alpha, beta, gamma, delta fr.Element }

// Setup runs a real Groth16 setup for the circuit of size p with fresh
// randomness from rng (crypto/rand if nil). Its cost is a handful of
// fixed-base scalar multiplications per wire: seconds at 2^16, which is where
// KeyAuto switches to benchmark keys.
func Setup(p circuit.Params, rng io.Reader) (*ProvingKey, *VerifyingKey, error) {
	return SetupContext(context.Background(), p, rng)
}

// setupChunk is how many scalar multiplications a setup does between looks
// at its context: a fraction of a second on one core.
const setupChunk = 1 << 12

// SetupContext is Setup that stops, returning ctx's error, soon after ctx
// is cancelled: a setup at 2^16 takes tens of seconds, too long to make a
// user who pressed Ctrl-C wait.
func SetupContext(ctx context.Context, p circuit.Params, rng io.Reader) (*ProvingKey, *VerifyingKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
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
	}
	var err error
	for _, m := range []struct {
		dst     *[]bls12381.G1Affine
		scalars []fr.Element
	}{{&pk.A, u}, {&pk.B1, v}, {&pk.L, k[nPub:]}, {&pk.H, hs}} {
		if *m.dst, err = chunked(ctx, m.scalars, func(s []fr.Element) []bls12381.G1Affine {
			return bls12381.BatchScalarMultiplicationG1(&g1, s)
		}); err != nil {
			return nil, nil, err
		}
	}
	if pk.B2, err = chunked(ctx, v, func(s []fr.Element) []bls12381.G2Affine {
		return bls12381.BatchScalarMultiplicationG2(&g2, s)
	}); err != nil {
		return nil, nil, err
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
