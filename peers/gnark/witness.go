package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
)

// The witness is provebench's (gpu/circuit): the same seed, proof and
// partition give the same bits and the same chain, so both provers prove
// the same statement. The derivation below follows gpu/circuit's Seed,
// elementFromSeed and adviceBit; TestPublicMatchesProvebench holds it to
// provebench's own output when bin/provebench is built.

// partitionSeed is provebench's circuit.Seed.
func partitionSeed(base uint64, proof, partition int) uint64 {
	return mix64(mix64(base^0x9e3779b97f4a7c15) ^ uint64(proof)<<32 ^ uint64(partition))
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// elementFromSeed maps a seed to a field element spread over the field.
func elementFromSeed(seed uint64) fr.Element {
	var buf [32]byte
	s := seed
	for i := 0; i < 4; i++ {
		s = mix64(s)
		binary.BigEndian.PutUint64(buf[8*i:], s)
	}
	var e fr.Element
	e.SetBytes(buf[:])
	return e
}

// adviceBit is the advice drawn at step j: rounds S-box rounds x^5+c on a
// running field state (the synthesis cost knob), or a hash without rounds.
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

const cancelCheckEvery = 1 << 14

// assignment is one partition's inputs: the public In and Out, and the
// bits, in the order of gnark's witness vector (public, then secret).
type assignment struct {
	vec fr.Vector // In, Out, bits...
}

// assign derives the bits from seed as provebench's synthesis does, and
// runs the chain to its end value (the public Out, which the prover must
// know; gnark's solver computes the chain states again).
func assign(ctx context.Context, s shape, seed uint64, rounds int) (*assignment, error) {
	vec := make(fr.Vector, numPublic+s.numBits())
	in := elementFromSeed(seed)
	advice := elementFromSeed(^seed)
	var rc fr.Element
	rc.SetUint64(0x5bd1e995)
	state := in
	next := numPublic
	var pending, weight uint64 = 0, 1
	var ca, cb, left, right fr.Element
	for j := 0; j < s.steps(); j++ {
		if j%cancelCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("witness cancelled at step %d of %d: %w", j, s.steps(), err)
			}
		}
		bit := adviceBit(&advice, j, rounds, &rc, seed)
		if s.isBitStep(j) {
			if bit {
				vec[next].SetOne()
				pending += weight
			}
			next++
			weight <<= 1
			continue
		}
		a, b := stepConstants(j)
		ca.SetUint64(a)
		cb.SetUint64(b)
		left.Add(&state, &ca)
		right.SetUint64(pending)
		right.Add(&right, &cb)
		state.Mul(&left, &right)
		pending, weight = 0, 1
	}
	vec[0], vec[1] = in, state
	return &assignment{vec: vec}, nil
}

// witness is the full witness in gnark's form. It is built from gnark's
// binary encoding (what a prover service receives): frontend.NewWitness
// walks the circuit by reflection and sends every value through a channel,
// seconds at 2^24 for work that is a copy.
func (a *assignment) witness() (witness.Witness, error) {
	return encodeWitness(a.vec, numPublic)
}

// public is the public part (In, Out), for the verifier.
func (a *assignment) public() (witness.Witness, error) {
	return encodeWitness(a.vec[:numPublic], numPublic)
}

func encodeWitness(vec fr.Vector, nbPublic int) (witness.Witness, error) {
	var buf bytes.Buffer
	buf.Grow(12 + len(vec)*fr.Bytes)
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(nbPublic))
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(vec)-nbPublic))
	buf.Write(hdr[:])
	if _, err := vec.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("encode witness: %w", err)
	}
	w, err := witness.New(ecc.BLS12_381.ScalarField())
	if err != nil {
		return nil, err
	}
	if err := w.UnmarshalBinary(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("decode witness: %w", err)
	}
	return w, nil
}
