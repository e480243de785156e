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
	tw, err := drawToxicWaste(rng)
	if err != nil {
		return nil, nil, err
	}
	at, err := evaluateAtTau(p, &tw)
	if err != nil {
		return nil, nil, err
	}
	return encodeKeys(ctx, p, &tw, at)
}

// drawToxicWaste draws tau, alpha, beta, gamma and delta from rng, in
// that order.
func drawToxicWaste(rng io.Reader) (toxicWaste, error) {
	var tw toxicWaste
	for _, e := range []*fr.Element{&tw.tau, &tw.alpha, &tw.beta, &tw.gamma, &tw.delta} {
		v, err := randomScalar(rng)
		if err != nil {
			return toxicWaste{}, fmt.Errorf("setup: draw toxic waste: %w", err)
		}
		*e = v
	}
	return tw, nil
}

// atTau is what the keys hold in the exponent: the circuit's polynomials
// evaluated at tau.
type atTau struct {
	u, v []fr.Element // the QAP's A and B columns, per wire
	k    []fr.Element // (beta u_i + alpha v_i + w_i) / (gamma for public wires, delta for private)
	h    []fr.Element // tau^i Z(tau) / delta, i < N-1
}

// evaluateAtTau evaluates the circuit of size p at tw's tau: through the
// Lagrange basis, the QAP columns, then K and H.
func evaluateAtTau(p circuit.Params, tw *toxicWaste) (*atTau, error) {
	n := p.Constraints
	lagrange, zTau, err := lagrangeAtTau(n, &tw.tau)
	if err != nil {
		return nil, err
	}
	u, v, w := qapColumns(p, lagrange)
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&tw.gamma)
	deltaInv.Inverse(&tw.delta)
	return &atTau{
		u: u,
		v: v,
		k: wireKeys(tw, u, v, w, &gammaInv, &deltaInv),
		h: hBasis(n, &zTau, &tw.tau, &deltaInv),
	}, nil
}

// lagrangeAtTau is the Lagrange basis of the domain of size n at tau,
// L_j(tau) = (tau^N - 1)/N * w^j / (tau - w^j), and Z(tau) = tau^N - 1.
func lagrangeAtTau(n int, tau *fr.Element) ([]fr.Element, fr.Element, error) {
	dom := fft.NewDomain(uint64(n))
	var zTau fr.Element
	zTau.Exp(*tau, big.NewInt(int64(n)))
	var one fr.Element
	one.SetOne()
	zTau.Sub(&zTau, &one)
	if zTau.IsZero() {
		return nil, zTau, fmt.Errorf("setup: tau is in the domain; draw again")
	}
	omegas := make([]fr.Element, n)
	den := make([]fr.Element, n)
	omegas[0].SetOne()
	for j := 1; j < n; j++ {
		omegas[j].Mul(&omegas[j-1], &dom.Generator)
	}
	for j := range den {
		den[j].Sub(tau, &omegas[j])
	}
	den = fr.BatchInvert(den)
	var scale fr.Element
	scale.Mul(&zTau, &dom.CardinalityInv)
	lagrange := omegas // reuse
	for j := range lagrange {
		lagrange[j].Mul(&omegas[j], &den[j]).Mul(&lagrange[j], &scale)
	}
	return lagrange, zTau, nil
}

// qapColumns are the QAP's columns at tau, one value per wire: each
// matrix's terms weighted by their constraint's Lagrange value.
func qapColumns(p circuit.Params, lagrange []fr.Element) (u, v, w []fr.Element) {
	nWires := p.NumWires()
	u = make([]fr.Element, nWires)
	v = make([]fr.Element, nWires)
	w = make([]fr.Element, nWires)
	cols := [3][]fr.Element{u, v, w}
	circuit.Terms(p, func(t circuit.Term) {
		var x fr.Element
		x.Mul(&t.Coeff, &lagrange[t.Constraint])
		cols[t.Matrix][t.Wire].Add(&cols[t.Matrix][t.Wire], &x)
	})
	return u, v, w
}

// wireKeys is K_i = (beta u_i + alpha v_i + w_i) / (gamma for public
// wires, delta for private) for every wire.
func wireKeys(tw *toxicWaste, u, v, w []fr.Element, gammaInv, deltaInv *fr.Element) []fr.Element {
	nPub := 1 + circuit.NumPublic
	k := make([]fr.Element, len(u))
	for i := range k {
		var t fr.Element
		k[i].Mul(&tw.beta, &u[i])
		t.Mul(&tw.alpha, &v[i])
		k[i].Add(&k[i], &t).Add(&k[i], &w[i])
		if i < nPub {
			k[i].Mul(&k[i], gammaInv)
		} else {
			k[i].Mul(&k[i], deltaInv)
		}
	}
	return k
}

// hBasis is H_i = tau^i Z(tau) / delta for i < N-1.
func hBasis(n int, zTau, tau, deltaInv *fr.Element) []fr.Element {
	hs := make([]fr.Element, n-1)
	hs[0].Mul(zTau, deltaInv)
	for i := 1; i < len(hs); i++ {
		hs[i].Mul(&hs[i-1], tau)
	}
	return hs
}

// encodeKeys puts the evaluations in the exponent: the wire columns and
// H in G1 (and B in G2) a chunk at a time, checking ctx between chunks,
// then the fixed elements and the verifying key.
func encodeKeys(ctx context.Context, p circuit.Params, tw *toxicWaste, at *atTau) (*ProvingKey, *VerifyingKey, error) {
	nPub := 1 + circuit.NumPublic
	_, _, g1, g2 := bls12381.Generators()
	pk := &ProvingKey{
		Kind:         KindSetup,
		BitsPerMille: p.EffectiveBitsPerMille(),
		Domain:       p.Constraints,
		NumWires:     p.NumWires(),
		NumPublic:    circuit.NumPublic,
	}
	var err error
	for _, m := range []struct {
		dst     *[]bls12381.G1Affine
		scalars []fr.Element
	}{{&pk.A, at.u}, {&pk.B1, at.v}, {&pk.L, at.k[nPub:]}, {&pk.H, at.h}} {
		if *m.dst, err = chunked(ctx, m.scalars, func(s []fr.Element) []bls12381.G1Affine {
			return bls12381.BatchScalarMultiplicationG1(&g1, s)
		}); err != nil {
			return nil, nil, err
		}
	}
	if pk.B2, err = chunked(ctx, at.v, func(s []fr.Element) []bls12381.G2Affine {
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
		IC:     bls12381.BatchScalarMultiplicationG1(&g1, at.k[:nPub]),
	}
	return pk, vk, nil
}
