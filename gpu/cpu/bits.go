package cpu

import (
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/parallel"
)

// jacobian is what the bit sums need of gnark-crypto's G1Jac and G2Jac (J)
// over their affine points (A).
type jacobian[J, A any] interface {
	*J
	AddMixed(a *A) *J
	AddAssign(q *J) *J
	FromAffine(a *A) *J
	ScalarMultiplication(p *J, s *big.Int) *J
}

// multiExp is gnark-crypto's MSM of a group, as a method expression.
type multiExp[J, A any] func(dst *J, points []A, scalars []fr.Element, cfg ecc.MultiExpConfig) (*J, error)

// splitMSM computes sum_i scalars[i]*points[i] as a full MSM over the first
// full scalars and a bit sum over the rest, which the circuit guarantees are
// 0 or 1.
func splitMSM[J, A any, PJ jacobian[J, A]](dst *J, points []A, scalars []fr.Element, full int, cfg ecc.MultiExpConfig, threads int, msm multiExp[J, A]) error {
	var head J
	if _, err := msm(&head, points[:full], scalars[:full], cfg); err != nil {
		return err
	}
	*dst = bitSum[J, A, PJ](points[full:], scalars[full:], threads)
	PJ(dst).AddAssign(&head)
	return nil
}

// oneWireAndBits computes a B sum: the one wire's term (scalars[0], which is
// 1 in every satisfying assignment, times points[0]) plus the bit sum over
// scalars[full:]. The other full-width wires have no B term.
func oneWireAndBits[J, A any, PJ jacobian[J, A]](dst *J, points []A, scalars []fr.Element, full, threads int) error {
	var head J
	PJ(&head).FromAffine(&points[0])
	PJ(&head).ScalarMultiplication(&head, scalars[0].BigInt(new(big.Int)))
	*dst = bitSum[J, A, PJ](points[full:], scalars[full:], threads)
	PJ(dst).AddAssign(&head)
	return nil
}

// bitSum is sum_i scalars[i]*points[i] for scalars that are 0 or 1: a mixed
// addition for each one, split over threads. A scalar that is neither (a
// tampered dataset) still gets its exact term, by a scalar multiplication,
// so the sum is right for any input.
func bitSum[J, A any, PJ jacobian[J, A]](points []A, scalars []fr.Element, threads int) J {
	chunks := max(1, min(threads, len(points)/4096))
	partial := make([]J, chunks)
	per := (len(points) + chunks - 1) / chunks
	parallel.Execute(chunks, func(start, end int) {
		for c := start; c < end; c++ {
			acc := PJ(&partial[c])
			lo, hi := c*per, min((c+1)*per, len(points))
			for i := lo; i < hi; i++ {
				switch {
				case scalars[i].IsZero():
				case scalars[i].IsOne():
					acc.AddMixed(&points[i])
				default:
					var t J
					PJ(&t).FromAffine(&points[i])
					PJ(&t).ScalarMultiplication(&t, scalars[i].BigInt(new(big.Int)))
					acc.AddAssign(&t)
				}
			}
		}
	}, chunks)
	var sum J
	for c := range partial {
		PJ(&sum).AddAssign(&partial[c])
	}
	return sum
}
