// Package circuit defines the R1CS circuit family that provebench proves and
// its synthesis: from a seed to a partition's dataset (the a, b, c evaluation
// vectors and the wire assignment).
//
// The family stands in for one PoRep partition. It has about one wire per
// constraint, as the real circuit does (130.3M constraints, 130.2M wires),
// and a chosen share of its private wires are bits, checked by boolean
// constraints (Params.BitsPerMille, default one half), since real PoRep
// circuits are bit-heavy and a prover turns bit-valued scalars into cheap
// batch additions. Its shape, for a domain of N constraints and k = N-4
// steps, of which nb make bits and ns = k-nb make chain states:
//
//	wire 0             the constant one
//	wire 1             public input: the chain's start value (from the seed)
//	wire 2             public input: the chain's end value
//	wire 3+m           chain state m, made by the m-th mixing step (m < ns)
//	wire 3+ns+i        advice bit i, made by the i-th bit step (i < nb)
//
//	bit step           b*(b-1) = 0                         b an advice bit
//	mixing step        (s + cA(j)) * (sum_t 2^t b_t + cB(j)) = s'
//	                   s = the previous state (wire 1 for the first), the
//	                   b_t the bits made since the previous mixing step
//	output             s_last * 1 = wire 2
//	inputs             wire i * 0 = 0 for i = 0, 1, 2   (keeps the verifier's
//	                   input terms independent, as bellman does)
//
// Step j is a bit step when the running count of bits, round(j*f + 1/2) for
// the bit fraction f, steps up at j: the bits are spread evenly, and at
// f = 1/2 the steps alternate, bit first.
//
// Every wire the MSMs see in one of two contiguous runs: the full-width
// wires (the one wire, the inputs and the states, wires 0..3+ns-1) and the
// bits (wires 3+ns..). A prover sums the bits' points as batch additions
// and runs a full MSM over the rest only; B has terms for the one wire and
// the bits alone, so its MSMs are all bits (see BitWires, InB).
//
// Synthesis cost is a knob: every step runs Rounds rounds of the S-box
// x -> x^5 + c on a running field state from which the advice bits are
// drawn, real field work whose result the circuit consumes. It lets a
// scenario set the ratio of CPU synthesis to proving time without changing
// the constraint count.
package circuit

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/hostmem"
	"github.com/provebench/provebench/gpu/shape"
)

// The family's members and their sizes are gpu/shape's (what the
// configuration vocabulary reads without linking the field arithmetic);
// these names let the synthesis below read as before.
type Params = shape.Params

// The limits of the family (gpu/shape).
const (
	NumPublic           = shape.NumPublic
	MinLogConstraints   = shape.MinLogConstraints
	MaxLogConstraints   = shape.MaxLogConstraints
	MaxRounds           = shape.MaxRounds
	DefaultBitsPerMille = shape.DefaultBitsPerMille
	MinBitsPerMille     = shape.MinBitsPerMille
	MaxBitsPerMille     = shape.MaxBitsPerMille
)

// BitsPerMilleFor is a bit fraction as Params.BitsPerMille (gpu/shape).
func BitsPerMilleFor(fraction float64) (int, error) { return shape.BitsPerMilleFor(fraction) }

// Matrix names one of the three R1CS matrices.
type Matrix int

// The R1CS matrices.
const (
	MatA Matrix = iota
	MatB
	MatC
)

// Term is a non-zero coefficient: constraint row, wire column.
type Term struct {
	Constraint int
	Wire       int
	Matrix     Matrix
	Coeff      fr.Element
}

// Terms calls fn for every non-zero coefficient of the circuit's A, B and C
// matrices. Setup evaluates the QAP with it.
func Terms(p Params, fn func(Term)) {
	var one, minusOne fr.Element
	one.SetOne()
	minusOne.Neg(&one)
	k := p.Steps()
	firstBit := p.BitWires()
	state, nextState, nextBit, pending := 1, 1+NumPublic, firstBit, 0
	for j := 0; j < k; j++ {
		if p.IsBitStep(j) {
			w := nextBit
			nextBit++
			pending++
			fn(Term{j, w, MatA, one})
			fn(Term{j, w, MatB, one})
			fn(Term{j, 0, MatB, minusOne})
			continue
		}
		w := nextState
		nextState++
		ca, cb := stepConstants(j)
		fn(Term{j, state, MatA, one})
		fn(Term{j, 0, MatA, ca})
		var weight fr.Element
		weight.SetOne()
		for t := 0; t < pending; t++ {
			fn(Term{j, nextBit - pending + t, MatB, weight})
			weight.Double(&weight)
		}
		fn(Term{j, 0, MatB, cb})
		fn(Term{j, w, MatC, one})
		state, pending = w, 0
	}
	fn(Term{k, state, MatA, one})
	fn(Term{k, 0, MatB, one})
	fn(Term{k, 2, MatC, one})
	for i := 0; i <= NumPublic; i++ {
		fn(Term{k + 1 + i, i, MatA, one})
	}
}

// stepConstants are the fixed constants of mixing step j. They belong to the
// circuit, not the witness, so they depend on j alone.
func stepConstants(j int) (ca, cb fr.Element) {
	ca.SetUint64(uint64(j) + 1)
	cb.SetUint64(uint64(j%7) + 2)
	return ca, cb
}

// Seed derives the witness seed of one partition of one proof, so that every
// partition of a batch proves a different statement.
func Seed(base uint64, proof, partition int) uint64 {
	return mix64(mix64(base^0x9e3779b97f4a7c15) ^ uint64(proof)<<32 ^ uint64(partition))
}

// mix64 is the splitmix64 finaliser: a cheap bijective scrambler, enough for
// deterministic, well-spread witness seeds (not for secrets).
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// elementFromSeed maps a seed to a field element spread over the whole field.
func elementFromSeed(seed uint64) fr.Element {
	var buf [32]byte
	s := seed
	for i := 0; i < 4; i++ {
		s = mix64(s)
		binary.BigEndian.PutUint64(buf[8*i:], s)
	}
	var e fr.Element
	e.SetBytes(buf[:]) // reduces mod r
	return e
}

// cancelCheckEvery is how many steps synthesis runs between context checks:
// often enough to stop within milliseconds, rarely enough to cost nothing.
const cancelCheckEvery = 1 << 14

// Synthesize computes the witness of one partition for seed and writes its
// dataset: the assignment and a_j, b_j, c_j = <A_j,z>, <B_j,z>, <C_j,z> for
// every constraint j. The caller owns the returned dataset and must Free it.
func Synthesize(ctx context.Context, p Params, seed uint64, proof, partition int) (*dataset.Dataset, error) {
	return SynthesizePinned(ctx, p, seed, proof, partition, nil)
}

// SynthesizePinned is Synthesize into memory page-locked by pin (when not
// nil) before it is written: a GPU backend then uploads the dataset by DMA,
// and the locking is paid here, on the synthesis worker, not on the GPU's
// path.
func SynthesizePinned(ctx context.Context, p Params, seed uint64, proof, partition int, pin hostmem.Pinner) (*dataset.Dataset, error) {
	return SynthesizeInto(ctx, p, seed, proof, partition, Memory{Pin: pin})
}

// Memory says where synthesis puts a dataset.
type Memory struct {
	// Alloc supplies the buffers (a GPU backend's pool of page-locked
	// memory, say); fresh anonymous memory when nil.
	Alloc dataset.Allocator
	// Pin, when set, page-locks the buffers before they are written.
	Pin hostmem.Pinner
}

// NewDataset allocates a dataset of p's shape in mem, not yet written.
func NewDataset(p Params, proof, partition int, mem Memory) (*dataset.Dataset, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	alloc := mem.Alloc
	if alloc == nil {
		alloc = hostmem.Alloc
	}
	ds, err := dataset.NewWith(alloc, proof, partition, p.Constraints, p.NumWires(), NumPublic)
	if err != nil {
		return nil, err
	}
	if mem.Pin != nil {
		if err := ds.Pin(mem.Pin); err != nil {
			ds.Free()
			return nil, err
		}
	}
	return ds, nil
}

// SynthesizeInto is Synthesize into the memory mem says.
func SynthesizeInto(ctx context.Context, p Params, seed uint64, proof, partition int, mem Memory) (*dataset.Dataset, error) {
	ds, err := NewDataset(p, proof, partition, mem)
	if err != nil {
		return nil, err
	}
	if err := fill(ctx, p, seed, ds); err != nil {
		ds.Free()
		return nil, err
	}
	return ds, nil
}

func fill(ctx context.Context, p Params, seed uint64, ds *dataset.Dataset) error {
	a, b, c, err := ds.ABC()
	if err != nil {
		return err
	}
	z, err := ds.Wires()
	if err != nil {
		return err
	}
	var one, minusOne, roundConst fr.Element
	one.SetOne()
	minusOne.Neg(&one)
	roundConst.SetUint64(0x5bd1e995)

	z[0].SetOne()
	z[1] = elementFromSeed(seed)
	state := z[1]
	advice := elementFromSeed(^seed)
	k := p.Steps()
	nextState, nextBit := 1+NumPublic, p.BitWires()
	// pendingBits is sum_t 2^t b_t over the bits made since the last
	// mixing step (at most 19 of them: it fits a word).
	var pendingBits, pendingWeight uint64 = 0, 1
	for j := 0; j < k; j++ {
		if j%cancelCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("synthesis cancelled at step %d of %d: %w", j, k, err)
			}
		}
		bit := adviceBit(&advice, j, p.Rounds, &roundConst, seed)
		if p.IsBitStep(j) {
			w := nextBit
			nextBit++
			if bit {
				z[w].SetOne()
				a[j].SetOne()
				b[j].SetZero()
				pendingBits += pendingWeight
			} else {
				z[w].SetZero()
				a[j].SetZero()
				b[j] = minusOne
			}
			pendingWeight <<= 1
			c[j].SetZero()
			continue
		}
		w := nextState
		nextState++
		ca, cb := stepConstants(j)
		a[j].Add(&state, &ca)
		b[j].SetUint64(pendingBits)
		b[j].Add(&b[j], &cb)
		c[j].Mul(&a[j], &b[j])
		z[w] = c[j]
		state = c[j]
		pendingBits, pendingWeight = 0, 1
	}
	// output constraint: s_last * 1 = out
	z[2] = state
	a[k] = state
	b[k].SetOne()
	c[k] = state
	// input constraints: z_i * 0 = 0
	for i := 0; i <= NumPublic; i++ {
		a[k+1+i] = z[i]
		b[k+1+i].SetZero()
		c[k+1+i].SetZero()
	}
	return nil
}

// adviceBit derives the advice drawn at step j (used if j is a bit step).
// With rounds > 0 it runs that many S-box rounds on a running field state,
// so every step costs the same whatever the bit fraction; with 0 it costs a
// hash of the seed.
func adviceBit(state *fr.Element, j, rounds int, rc *fr.Element, seed uint64) bool {
	if rounds == 0 {
		return mix64(seed^uint64(j))&1 == 1
	}
	var sq fr.Element
	for r := 0; r < rounds; r++ {
		sq.Square(state)
		sq.Square(&sq)
		state.Mul(state, &sq)
		state.Add(state, rc)
	}
	return state.Bits()[0]&1 == 1
}
