//go:build cuda

package cuda

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/core"
	icicleg2 "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/g2"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/msm"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/ntt"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/vecOps"
	icicle "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime/config_extension"

	"github.com/provebench/provebench/gpu"
)

// partition is one partition's vectors on a device.
type partition struct {
	n, numPublic int
	// a, b, c hold the evaluations; a ends up holding the quotient.
	a, b, c core.DeviceSlice
	wires   core.DeviceSlice
	// g1Sums holds the A, B1, L and H sums, g2Sum the B2 sum (projective).
	g1Sums, g2Sum core.DeviceSlice
}

// Order of the G1 sums in partition.g1Sums.
const (
	sumA = iota
	sumB1
	sumL
	sumH
	numG1Sums
)

// kernel is one ICICLE call queued on a stream. The prover runs them back to
// back; BenchmarkKernels times each one alone.
type kernel struct {
	name string
	run  func() icicle.EIcicleError
}

// quotientKernels compute the quotient's coefficients in a, using b and c as
// scratch: a, b and c are interpolated and evaluated on the coset
// w_2N*<w_N>, where the vanishing polynomial is the constant Z; a*b - c is
// interpolated back from the coset. The result is Z*R*h in the kernels'
// canonical arithmetic (see package doc), in natural order, h[N-1] = 0.
// vecExt is the vector operations' backend extension (nil for CUDA).
func quotientKernels(p *partition, cosetGen *fr.Element, stream icicle.Stream, vecExt config_extension.ConfigExtensionHandler) []kernel {
	transform := func(v *core.DeviceSlice, dir core.NTTDir, coset bool) func() icicle.EIcicleError {
		return func() icicle.EIcicleError {
			cfg := ntt.GetDefaultNttConfig()
			cfg.StreamHandle = stream
			cfg.IsAsync = true
			cfg.Ordering = core.KNN
			if coset {
				cfg.CosetGen = scalarLimbs(cosetGen)
			}
			return ntt.Ntt(*v, dir, &cfg, *v)
		}
	}
	vec := func(op core.VecOps, x, y *core.DeviceSlice) func() icicle.EIcicleError {
		return func() icicle.EIcicleError {
			cfg := core.DefaultVecOpsConfig()
			cfg.StreamHandle = stream
			cfg.IsAsync = true
			cfg.Ext = vecExt
			return vecOps.VecOp(*x, *y, *x, cfg, op)
		}
	}
	return []kernel{
		{"intt_a", transform(&p.a, core.KInverse, false)},
		{"coset_ntt_a", transform(&p.a, core.KForward, true)},
		{"intt_b", transform(&p.b, core.KInverse, false)},
		{"coset_ntt_b", transform(&p.b, core.KForward, true)},
		{"intt_c", transform(&p.c, core.KInverse, false)},
		{"coset_ntt_c", transform(&p.c, core.KForward, true)},
		// a*R * b*R would be a*b*R^2 against c*R: take a out of
		// Montgomery form so the product is a*b*R.
		{"from_montgomery_a", func() icicle.EIcicleError { return fromMontgomery(p.a, stream, vecExt) }},
		{"mul_ab", vec(core.Mul, &p.a, &p.b)},
		{"sub_c", vec(core.Sub, &p.a, &p.c)},
		{"coset_intt_h", transform(&p.a, core.KInverse, true)},
	}
}

// msmKernels compute the five sums into p.g1Sums and p.g2Sum. Scalars are
// Montgomery representations read as integers, bases the resident key.
func msmKernels(p *partition, key *residentKey, stream icicle.Stream) []kernel {
	g1 := func(scalars func() core.DeviceSlice, bases *core.DeviceSlice, slot int) func() icicle.EIcicleError {
		return func() icicle.EIcicleError {
			cfg := msm.GetDefaultMSMConfig()
			cfg.StreamHandle = stream
			cfg.IsAsync = true
			return msm.Msm(scalars(), *bases, &cfg, p.g1Sums.Range(slot, slot+1, false))
		}
	}
	wires := func() core.DeviceSlice { return p.wires }
	private := func() core.DeviceSlice { return p.wires.RangeFrom(1 + p.numPublic) }
	quotient := func() core.DeviceSlice { return p.a.RangeTo(p.n-1, false) }
	return []kernel{
		{gpu.StageMSMA, g1(wires, &key.a, sumA)},
		{gpu.StageMSMB1, g1(wires, &key.b1, sumB1)},
		{gpu.StageMSMB2, func() icicle.EIcicleError {
			cfg := icicleg2.G2GetDefaultMSMConfig()
			cfg.StreamHandle = stream
			cfg.IsAsync = true
			return icicleg2.G2Msm(p.wires, key.b2, &cfg, p.g2Sum)
		}},
		{gpu.StageMSML, g1(private, &key.l, sumL)},
		{gpu.StageMSMH, g1(quotient, &key.h, sumH)},
	}
}
