package main

import (
	"fmt"
	"math/big"
	"math/bits"

	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
)

// numPublic is the number of public inputs (not counting the one wire): the
// chain's start and end values, as in provebench's circuit.
const numPublic = 2

// Bit fraction limits in thousandths, provebench's (gpu/circuit).
const (
	defaultBitsPerMille = 500
	minBitsPerMille     = 50
	maxBitsPerMille     = 950
	minLog, maxLog      = 5, 27
)

// shape is one member of provebench's circuit family (gpu/circuit): a
// domain of n constraints, of which n-4 are steps making one private wire
// each (bits or chain states), one is the output and three bind the public
// wires.
type shape struct {
	n            int
	bitsPerMille int
}

func newShape(n, bitsPerMille int) (shape, error) {
	if n <= 0 || n&(n-1) != 0 {
		return shape{}, fmt.Errorf("constraints %d is not a power of two", n)
	}
	if lg := bits.TrailingZeros(uint(n)); lg < minLog || lg > maxLog {
		return shape{}, fmt.Errorf("constraints 2^%d is outside 2^%d..2^%d", lg, minLog, maxLog)
	}
	if bitsPerMille < minBitsPerMille || bitsPerMille > maxBitsPerMille {
		return shape{}, fmt.Errorf("bit fraction %.3f is outside %.2f..%.2f",
			float64(bitsPerMille)/1000, float64(minBitsPerMille)/1000, float64(maxBitsPerMille)/1000)
	}
	return shape{n: n, bitsPerMille: bitsPerMille}, nil
}

// steps is the number of step constraints (the ones that make a wire).
func (s shape) steps() int { return s.n - (numPublic + 1) - 1 }

// bitsBefore is how many of the first j steps are bit steps: the running
// count round(j*f + 1/2) steps up at a bit step, as in provebench.
func (s shape) bitsBefore(j int) int { return (j*s.bitsPerMille + 500) / 1000 }

func (s shape) isBitStep(j int) bool { return s.bitsBefore(j+1) > s.bitsBefore(j) }

// numBits is the number of bit wires (the secret inputs here).
func (s shape) numBits() int { return s.bitsBefore(s.steps()) }

// numWires is the length of the assignment: one, the inputs and one
// private wire per step, as provebench's.
func (s shape) numWires() int { return 1 + numPublic + s.steps() }

// stepConstants are the constants of mixing step j (provebench's).
func stepConstants(j int) (ca, cb uint64) { return uint64(j) + 1, uint64(j%7) + 2 }

// chain is provebench's circuit family in gnark's frontend. The wires are
// gnark's order (public, secret, internal): the one wire, In, Out, the bits
// (secret inputs), then the chain states (internal wires made by the mixing
// steps); provebench orders the states before the bits, which moves no cost.
// The constraints are provebench's, one for one, each matrix term in the
// same matrix:
//
//	bit step     b * (b - 1) = 0
//	mixing step  (s + cA) * (sum 2^t b_t + cB) = s'
//	output       s_last * 1 = Out
//	inputs       w * 0 = 0 for w = one, In, Out
//
// The linear expressions are the frontend's (api.Add, api.Mul by a
// constant), but every constraint is emitted as an R1C through the
// frontend's CustomizableSystem (api.Compiler().AddInstruction), because
// the frontend's own calls do not keep the shape: its products put the
// operand with more terms in A (newR1C keeps B short), which for a mixing
// step of two or more bits moves the full-width chain state into B and so
// into the G2 MSM; a product with a constant factor (a mixing step that
// consumes no bits, at bit fractions below one half) is folded into a
// linear expression, with no constraint; and no call makes w * 0 = 0. A
// mixing step makes its state with a blueprint of one output wire
// (stateR1C), which gnark's solver solves as any R1C with one unknown.
// TestShapeIsProvebenchs holds it to provebench's terms.
type chain struct {
	In   frontend.Variable   `gnark:",public"`
	Out  frontend.Variable   `gnark:",public"`
	Bits []frontend.Variable `gnark:",secret"`

	shape shape `gnark:"-"`
}

// newChain returns the circuit of shape s, for compiling.
func newChain(s shape) *chain {
	return &chain{shape: s, Bits: make([]frontend.Variable, s.numBits())}
}

// Define implements frontend.Circuit.
func (c *chain) Define(api frontend.API) error {
	cmp := api.Compiler()
	generic := cmp.AddBlueprint(&constraint.BlueprintGenericR1C{})
	state := cmp.AddBlueprint(&stateR1C{})
	s := c.shape
	cur := c.In
	var pending []frontend.Variable
	next := 0
	for j := 0; j < s.steps(); j++ {
		if s.isBitStep(j) {
			b := c.Bits[next]
			next++
			cmp.AddInstruction(generic, r1c(linear(cmp, b), linear(cmp, api.Sub(b, 1)), nil))
			pending = append(pending, b)
			continue
		}
		ca, cb := stepConstants(j)
		right := constTerm(cmp, cb)
		if len(pending) > 0 {
			terms := make([]frontend.Variable, 0, len(pending))
			for t, b := range pending {
				terms = append(terms, api.Mul(b, uint64(1)<<t))
			}
			right = linear(cmp, api.Add(cb, terms[0], terms[1:]...))
		}
		wires := cmp.AddInstruction(state, r1c(linear(cmp, api.Add(cur, ca)), right, nil))
		cur = cmp.InternalVariable(wires[0])
		pending = pending[:0]
	}
	// output: s_last * 1 = Out
	cmp.AddInstruction(generic, r1c(linear(cmp, cur), constTerm(cmp, 1), linear(cmp, c.Out)))
	// inputs: w * 0 = 0
	for _, l := range []constraint.LinearExpression{constTerm(cmp, 1), linear(cmp, c.In), linear(cmp, c.Out)} {
		cmp.AddInstruction(generic, r1c(l, nil, nil))
	}
	return nil
}

// linear is v's linear expression, as wire terms.
func linear(cmp frontend.Compiler, v frontend.Variable) constraint.LinearExpression {
	var words []uint32
	cmp.ToCanonicalVariable(v).Compress(&words)
	l := make(constraint.LinearExpression, words[0])
	for i := range l {
		l[i] = constraint.Term{CID: words[1+2*i], VID: words[2+2*i]}
	}
	return l
}

// constTerm is the constant c as a term on the one wire (wire 0): the
// canonical form of a constant marks it constant instead, which an R1C
// does not read.
func constTerm(cmp frontend.Compiler, c uint64) constraint.LinearExpression {
	l := linear(cmp, new(big.Int).SetUint64(c))
	return constraint.LinearExpression{{CID: l[0].CID, VID: 0}}
}

// r1c is the calldata of the R1C l * r = o for the generic blueprint.
func r1c(l, r, o constraint.LinearExpression) []uint32 {
	var words []uint32
	(&constraint.BlueprintGenericR1C{}).CompressR1C(&constraint.R1C{L: l, R: r, O: o}, &words)
	return words
}

// stateR1C is an R1C L * R = O + s' whose output s' is a wire it makes: the
// generic R1C's encoding with one output, added to O on decoding (the
// instruction's first new wire). gnark's solver solves it as any R1C with
// one unknown wire; the setup reads it through DecompressR1C.
type stateR1C struct{ constraint.BlueprintGenericR1C }

// NbOutputs implements constraint.Blueprint.
func (b *stateR1C) NbOutputs(constraint.Instruction) int { return 1 }

// DecompressR1C implements constraint.BlueprintR1C.
func (b *stateR1C) DecompressR1C(c *constraint.R1C, inst constraint.Instruction) {
	b.BlueprintGenericR1C.DecompressR1C(c, inst)
	c.O = append(c.O, constraint.Term{CID: constraint.CoeffIdOne, VID: inst.WireOffset})
}

// UpdateInstructionTree implements constraint.Blueprint: the output wire
// sits one level above the wires it is made from.
func (b *stateR1C) UpdateInstructionTree(inst constraint.Instruction, tree constraint.InstructionTree) constraint.Level {
	level := b.BlueprintGenericR1C.UpdateInstructionTree(inst, tree)
	tree.InsertWire(inst.WireOffset, level)
	return level
}
