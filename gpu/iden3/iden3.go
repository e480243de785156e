// Package iden3 writes provebench's circuit and witnesses in iden3's binary
// formats, the ones circom writes and snarkjs reads: .r1cs (the constraint
// system, version 1) and .wtns (a witness, version 2). With them snarkjs,
// or any prover of that ecosystem, proves exactly the statements provebench
// proves, and the two can be benchmarked side by side.
//
// Both formats are iden3's binary container: a 4-byte magic, a uint32
// version, a uint32 section count, then sections of a uint32 type, a uint64
// size and the content. Integers are little-endian; field elements are n8
// bytes, little-endian, in standard (not Montgomery) form.
//
// r1cs sections: 1 header (n8, the prime, nWires, nPubOut, nPubIn, nPrvIn
// as uint32, nLabels as uint64, mConstraints as uint32), 2 constraints (for
// each, the A, B and C linear combinations: a uint32 term count, then per
// term a uint32 wire and its coefficient), 3 wire-to-label map (a uint64
// label per wire). wtns sections: 1 header (n8, the prime, the uint32
// number of values), 2 the values, wire 0 (the constant one) first.
package iden3

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/circuit"
)

// n8 is the byte size of a BLS12-381 scalar.
const n8 = fr.Bytes

// Section types.
const (
	r1csHeader      = 1
	r1csConstraints = 2
	r1csWireLabels  = 3
	wtnsHeader      = 1
	wtnsValues      = 2
)

// container writes an iden3 binary container.
type container struct {
	w   *bufio.Writer
	err error
}

func (c *container) put(v any) {
	if c.err == nil {
		c.err = binary.Write(c.w, binary.LittleEndian, v)
	}
}

func (c *container) raw(b []byte) {
	if c.err == nil {
		_, c.err = c.w.Write(b)
	}
}

func (c *container) start(magic string, version, sections uint32) {
	c.raw([]byte(magic))
	c.put(version)
	c.put(sections)
}

func (c *container) section(typ uint32, content []byte) {
	c.put(typ)
	c.put(uint64(len(content)))
	c.raw(content)
}

func (c *container) flush() error {
	if c.err == nil {
		c.err = c.w.Flush()
	}
	return c.err
}

// element appends e's standard form, little-endian.
func element(b *bytes.Buffer, e *fr.Element) {
	var le [n8]byte
	fr.LittleEndian.PutElement(&le, *e)
	b.Write(le[:])
}

// prime is the scalar field's modulus, little-endian.
func prime() []byte {
	be := fr.Modulus().Bytes()
	le := make([]byte, n8)
	for i, x := range be {
		le[len(be)-1-i] = x
	}
	return le
}

func u32(b *bytes.Buffer, v uint32) { _ = binary.Write(b, binary.LittleEndian, v) }

// WriteR1CS writes the circuit of p as a .r1cs file. Wire 0 is the
// constant one and wires 1..NumPublic the public inputs, as circom orders
// them; every other wire is internal.
func WriteR1CS(w io.Writer, p circuit.Params) error {
	if err := p.Validate(); err != nil {
		return err
	}
	var head bytes.Buffer
	u32(&head, n8)
	head.Write(prime())
	u32(&head, uint32(p.NumWires()))
	u32(&head, 0)                 // public outputs
	u32(&head, circuit.NumPublic) // public inputs
	u32(&head, 0)                 // private inputs: the rest are internal wires
	_ = binary.Write(&head, binary.LittleEndian, uint64(p.NumWires()))
	u32(&head, uint32(p.Constraints))

	cons, err := constraints(p)
	if err != nil {
		return err
	}
	var labels bytes.Buffer
	for i := range p.NumWires() {
		_ = binary.Write(&labels, binary.LittleEndian, uint64(i))
	}
	c := &container{w: bufio.NewWriter(w)}
	c.start("r1cs", 1, 3)
	c.section(r1csHeader, head.Bytes())
	c.section(r1csConstraints, cons)
	c.section(r1csWireLabels, labels.Bytes())
	return c.flush()
}

// constraints encodes the constraints section. circuit.Params.Terms gives
// the terms row by row, in increasing row order.
func constraints(p circuit.Params) ([]byte, error) {
	var out bytes.Buffer
	var rows [3][]circuit.Term
	row, written := 0, 0
	flush := func() {
		for _, lc := range rows {
			u32(&out, uint32(len(lc)))
			for _, t := range lc {
				u32(&out, uint32(t.Wire))
				element(&out, &t.Coeff)
			}
		}
		rows = [3][]circuit.Term{}
		written++
	}
	var order error
	circuit.Terms(p, func(t circuit.Term) {
		if t.Constraint < row && order == nil {
			order = fmt.Errorf("iden3: circuit terms out of row order (%d after %d)", t.Constraint, row)
		}
		for row < t.Constraint {
			flush()
			row++
		}
		rows[t.Matrix] = append(rows[t.Matrix], t)
	})
	flush()
	if order != nil {
		return nil, order
	}
	if written != p.Constraints {
		return nil, fmt.Errorf("iden3: %d constraints written, the circuit has %d", written, p.Constraints)
	}
	return out.Bytes(), nil
}

// WriteWTNS writes a full assignment (wire 0 first) as a .wtns file.
func WriteWTNS(w io.Writer, wires []fr.Element) error {
	var head bytes.Buffer
	u32(&head, n8)
	head.Write(prime())
	u32(&head, uint32(len(wires)))
	var vals bytes.Buffer
	vals.Grow(len(wires) * n8)
	for i := range wires {
		element(&vals, &wires[i])
	}
	c := &container{w: bufio.NewWriter(w)}
	c.start("wtns", 2, 2)
	c.section(wtnsHeader, head.Bytes())
	c.section(wtnsValues, vals.Bytes())
	return c.flush()
}

// PrintWritten writes the export command's lines: the R1CS file written
// for p, with its sizes, and the witness file.
func PrintWritten(w io.Writer, r1cs, wtns string, p circuit.Params) {
	fmt.Fprintf(w, "wrote %s (%d constraints, %d wires, %d public inputs)\nwrote %s\n", r1cs, p.Constraints, p.NumWires(), circuit.NumPublic, wtns)
}
