package groth16

import (
	"context"
	"fmt"
	"math"
	"runtime"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

	"github.com/provebench/provebench/gpu/circuit"
)

// A benchmark key has the shapes and sizes of a real key (including the
// points at infinity where a wire has no B term, since MSMs skip those) but
// random points, so it costs the prover exactly what a real key would while
// its generation costs one point addition per point instead of a scalar
// multiplication: point i of a vector is R[i mod m] + S[i / m] for random
// points R and S made by scalar multiplication.

// randomGroup abstracts G1 and G2 for the generator below.
type randomGroup[A, J any] struct {
	batchMul func(scalars []fr.Element) []A
	sum      func(dst *J, s, r *A)
	toAff    func([]J) []A
}

var g1Random = randomGroup[bls12381.G1Affine, bls12381.G1Jac]{
	batchMul: func(s []fr.Element) []bls12381.G1Affine {
		_, _, g, _ := bls12381.Generators()
		return bls12381.BatchScalarMultiplicationG1(&g, s)
	},
	sum: func(dst *bls12381.G1Jac, s, r *bls12381.G1Affine) {
		dst.FromAffine(s)
		dst.AddMixed(r)
	},
	toAff: bls12381.BatchJacobianToAffineG1,
}

var g2Random = randomGroup[bls12381.G2Affine, bls12381.G2Jac]{
	batchMul: func(s []fr.Element) []bls12381.G2Affine {
		_, _, _, g := bls12381.Generators()
		return bls12381.BatchScalarMultiplicationG2(&g, s)
	},
	sum: func(dst *bls12381.G2Jac, s, r *bls12381.G2Affine) {
		dst.FromAffine(s)
		dst.AddMixed(r)
	},
	toAff: batchJacobianToAffineG2,
}

// batchJacobianToAffineG2 normalises G2 points with one field inversion for
// the whole batch (Montgomery's trick): gnark-crypto has this for G1 only,
// and an inversion per point would cost ten times the point addition.
func batchJacobianToAffineG2(jac []bls12381.G2Jac) []bls12381.G2Affine {
	out := make([]bls12381.G2Affine, len(jac))
	// out[i].X holds the product of the non-zero Z before i.
	var acc bls12381.E2
	acc.SetOne()
	for i := range jac {
		if jac[i].Z.IsZero() {
			continue
		}
		out[i].X = acc
		acc.Mul(&acc, &jac[i].Z)
	}
	acc.Inverse(&acc)
	for i := len(jac) - 1; i >= 0; i-- {
		if jac[i].Z.IsZero() {
			continue // (0, 0) is the point at infinity
		}
		var zInv, zInv2 bls12381.E2
		zInv.Mul(&out[i].X, &acc) // 1/Z_i
		acc.Mul(&acc, &jac[i].Z)
		zInv2.Square(&zInv)
		out[i].X.Mul(&jac[i].X, &zInv2)
		out[i].Y.Mul(&jac[i].Y, &zInv2).Mul(&out[i].Y, &zInv)
	}
	return out
}

func randomScalars(n int) ([]fr.Element, error) {
	out := make([]fr.Element, n)
	for i := range out {
		if _, err := out[i].SetRandom(); err != nil {
			return nil, fmt.Errorf("random scalar: %w", err)
		}
	}
	return out, nil
}

// fillRandom writes random points into dst; positions where atInfinity is
// true get the point at infinity.
func fillRandom[A, J any](ctx context.Context, g randomGroup[A, J], dst []A, atInfinity func(int) bool) error {
	// rows = cols = sqrt(n) keeps the scalar multiplications (rows + cols of
	// them) negligible next to the n additions.
	rows := max(1, int(math.Sqrt(float64(len(dst)))))
	cols := (len(dst) + rows - 1) / rows
	rs, err := randomScalars(rows)
	if err != nil {
		return err
	}
	cs, err := randomScalars(cols)
	if err != nil {
		return err
	}
	r, s := g.batchMul(rs), g.batchMul(cs)
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for c := 0; c < cols; c++ {
		eg.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			lo := c * rows
			hi := min(lo+rows, len(dst))
			jac := make([]J, hi-lo)
			for k := range jac {
				g.sum(&jac[k], &s[c], &r[k])
			}
			copy(dst[lo:hi], g.toAff(jac))
			var inf A
			for i := lo; i < hi; i++ {
				if atInfinity != nil && atInfinity(i) {
					dst[i] = inf
				}
			}
			return nil
		})
	}
	return eg.Wait()
}

// randomFixed draws the key's fixed points.
func randomFixed(pk *ProvingKey) error {
	s, err := randomScalars(5)
	if err != nil {
		return err
	}
	p1 := g1Random.batchMul(s[:3])
	p2 := g2Random.batchMul(s[3:])
	pk.Alpha1, pk.Beta1, pk.Delta1 = p1[0], p1[1], p1[2]
	pk.Beta2, pk.Delta2 = p2[0], p2[1]
	return nil
}

// writeRandomKey generates a benchmark key for p directly into the file at
// path (through a shared mapping, so the key is never held twice).
func writeRandomKey(ctx context.Context, path string, p circuit.Params) error {
	if err := p.Validate(); err != nil {
		return err
	}
	domain, wires := p.Constraints, p.NumWires()
	l := layoutFor(domain, wires, circuit.NumPublic)
	h := newHeader(KindRandom, p, wires, circuit.NumPublic, l)
	var fixed ProvingKey
	if err := randomFixed(&fixed); err != nil {
		return err
	}
	h.Alpha1, h.Beta1, h.Delta1 = g1Raw(&fixed.Alpha1), g1Raw(&fixed.Beta1), g1Raw(&fixed.Delta1)
	h.Beta2, h.Delta2 = g2Raw(&fixed.Beta2), g2Raw(&fixed.Delta2)
	notInB := func(i int) bool { return !p.InB(i) }
	return writeMapped(path, h, l, func(mem []byte) error {
		var pk ProvingKey
		vectorsIn(mem, l, domain, wires, circuit.NumPublic, &pk)
		for _, v := range []struct {
			dst []bls12381.G1Affine
			inf func(int) bool
		}{{pk.A, nil}, {pk.B1, notInB}, {pk.L, nil}, {pk.H, nil}} {
			if err := fillRandom(ctx, g1Random, v.dst, v.inf); err != nil {
				return err
			}
		}
		return fillRandom(ctx, g2Random, pk.B2, notInB)
	})
}
