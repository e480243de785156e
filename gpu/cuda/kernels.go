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

	"github.com/provebench/provebench/gpu/prover"
)

// partition is one partition's vectors on a device.
type partition struct {
	n, numPublic int
	// full is the first bit wire (circuit.Params.BitWires): wires before it
	// are full-width, the rest 0 or 1.
	full int
	// a, b, c hold the evaluations; a ends up holding the quotient.
	a, b, c core.DeviceSlice
	wires   core.DeviceSlice
	// g1Sums holds the G1 partial sums (full-width and bit parts, see the
	// order below), g2Sum the B2 sum over the bits (projective).
	g1Sums, g2Sum core.DeviceSlice
}

// Order of the G1 partial sums in partition.g1Sums. B has no full-width
// part on the device: its only full-width wire is the one wire, whose term
// the host adds (see job.collect).
const (
	sumAFull = iota
	sumABits
	sumB1Bits
	sumLFull
	sumLBits
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

// msmKernels compute the partial sums into p.g1Sums and p.g2Sum, one
// kernel per stage. Each MSM over the wires is split where the circuit puts
// its bits: the full-width wires run as an ordinary MSM on their Montgomery
// representations read as integers (over precomputed bases when the key has
// them), the bits, converted to canonical 0/1 first, as an MSM with a
// 1-bit scalar size: ICICLE then sums the selected points as batch
// additions. The bases are the resident key.
func msmKernels(p *partition, key *residentKey, stream icicle.Stream, vecExt config_extension.ConfigExtensionHandler) []kernel {
	g1 := func(scalars core.DeviceSlice, bases core.DeviceSlice, precompute int32, bitsize int32, slot int) func() icicle.EIcicleError {
		return func() icicle.EIcicleError {
			cfg := msm.GetDefaultMSMConfig()
			cfg.StreamHandle = stream
			cfg.IsAsync = true
			cfg.PrecomputeFactor = precompute
			cfg.Bitsize = bitsize
			return msm.Msm(scalars, bases, &cfg, p.g1Sums.Range(slot, slot+1, false))
		}
	}
	full, bits := p.wires.RangeTo(p.full, false), p.wires.RangeFrom(p.full)
	privFullLen := p.full - (1 + p.numPublic)
	private := p.wires.RangeFrom(1 + p.numPublic)
	privFull, privBits := private.RangeTo(privFullLen, false), private.RangeFrom(privFullLen)
	quotient := p.a.RangeTo(p.n-1, false)
	return []kernel{
		{prover.StageMSMA, sequence(
			func() icicle.EIcicleError { return fromMontgomery(bits, stream, vecExt) },
			g1(full, key.aFull, key.precompute, 0, sumAFull),
			g1(bits, key.a.RangeFrom(p.full), 1, 1, sumABits),
		)},
		{prover.StageMSMB1, g1(bits, key.b1.RangeFrom(p.full), 1, 1, sumB1Bits)},
		{prover.StageMSMB2, func() icicle.EIcicleError {
			cfg := icicleg2.G2GetDefaultMSMConfig()
			cfg.StreamHandle = stream
			cfg.IsAsync = true
			cfg.Bitsize = 1
			return icicleg2.G2Msm(bits, key.b2.RangeFrom(p.full), &cfg, p.g2Sum)
		}},
		{prover.StageMSML, sequence(
			g1(privFull, key.lFull, key.precompute, 0, sumLFull),
			g1(privBits, key.l.RangeFrom(privFullLen), 1, 1, sumLBits),
		)},
		{prover.StageMSMH, g1(quotient, key.hFull, key.precompute, 0, sumH)},
	}
}

// sequence queues calls one after the other, stopping at the first error.
func sequence(calls ...func() icicle.EIcicleError) func() icicle.EIcicleError {
	return func() icicle.EIcicleError {
		for _, c := range calls {
			if e := c(); e != icicle.Success {
				return e
			}
		}
		return icicle.Success
	}
}
