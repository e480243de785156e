package iden3

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/circuit"
)

// reader decodes what the writers wrote, independently of them: the test's
// own reading of the container layout in the package documentation.
type reader struct {
	t *testing.T
	b []byte
}

func (r *reader) u32() uint32 { v := binary.LittleEndian.Uint32(r.b); r.b = r.b[4:]; return v }
func (r *reader) u64() uint64 { v := binary.LittleEndian.Uint64(r.b); r.b = r.b[8:]; return v }
func (r *reader) elem() fr.Element {
	var le [n8]byte
	copy(le[:], r.b)
	r.b = r.b[n8:]
	e, err := fr.LittleEndian.Element(&le)
	if err != nil {
		r.t.Fatalf("element not reduced: %v", err)
	}
	return e
}

// sections checks the magic and version and returns the sections by type.
func sections(t *testing.T, data []byte, magic string, version uint32) map[uint32][]byte {
	t.Helper()
	if string(data[:4]) != magic {
		t.Fatalf("magic %q, want %q", data[:4], magic)
	}
	r := &reader{t: t, b: data[4:]}
	if v := r.u32(); v != version {
		t.Fatalf("version %d, want %d", v, version)
	}
	n := r.u32()
	out := map[uint32][]byte{}
	for range n {
		typ, size := r.u32(), r.u64()
		out[typ] = r.b[:size]
		r.b = r.b[size:]
	}
	if len(r.b) != 0 {
		t.Fatalf("%d bytes after the last section", len(r.b))
	}
	return out
}

func header(t *testing.T, b []byte) *reader {
	r := &reader{t: t, b: b}
	if n := r.u32(); n != n8 {
		t.Fatalf("n8 = %d", n)
	}
	if !bytes.Equal(r.b[:n8], prime()) {
		t.Fatal("prime is not BLS12-381's r")
	}
	r.b = r.b[n8:]
	return r
}

// TestWitnessSatisfiesExportedSystem decodes the exported constraint system
// and witness and checks every constraint, A.w * B.w = C.w.
func TestWitnessSatisfiesExportedSystem(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 6, Rounds: 2}
	var r1cs, wtns bytes.Buffer
	if err := WriteR1CS(&r1cs, p); err != nil {
		t.Fatal(err)
	}
	ds, err := circuit.Synthesize(context.Background(), p, circuit.Seed(1, 0, 0), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	wires, _ := ds.Wires()
	if err := WriteWTNS(&wtns, wires); err != nil {
		t.Fatal(err)
	}

	ws := sections(t, wtns.Bytes(), "wtns", 2)
	h := header(t, ws[wtnsHeader])
	if n := h.u32(); int(n) != p.NumWires() {
		t.Fatalf("wtns: %d values, want %d", n, p.NumWires())
	}
	vr := &reader{t: t, b: ws[wtnsValues]}
	w := make([]fr.Element, p.NumWires())
	for i := range w {
		w[i] = vr.elem()
	}
	if !w[0].IsOne() {
		t.Fatal("wire 0 is not one")
	}

	if n := unsatisfied(t, r1cs.Bytes(), p, w); n != 0 {
		t.Fatalf("%d constraints unsatisfied by the exported witness", n)
	}
	// A witness that breaks a constraint is caught by the same check.
	w[5].SetUint64(12345)
	if n := unsatisfied(t, r1cs.Bytes(), p, w); n == 0 {
		t.Fatal("a corrupted witness satisfied every constraint")
	}
}

// unsatisfied decodes an exported system and counts the constraints
// A.w * B.w = C.w that w breaks.
func unsatisfied(t *testing.T, data []byte, p circuit.Params, w []fr.Element) int {
	rs := sections(t, data, "r1cs", 1)
	h := header(t, rs[r1csHeader])
	nWires, nOut, nIn, nPrv, nLabels, m := h.u32(), h.u32(), h.u32(), h.u32(), h.u64(), h.u32()
	if int(nWires) != p.NumWires() || nOut != 0 || nIn != circuit.NumPublic || nPrv != 0 || nLabels != uint64(nWires) || int(m) != p.Constraints {
		t.Fatalf("header: wires %d out %d in %d prv %d labels %d constraints %d", nWires, nOut, nIn, nPrv, nLabels, m)
	}
	cr := &reader{t: t, b: rs[r1csConstraints]}
	bad := 0
	for range int(m) {
		var v [3]fr.Element
		for k := range v {
			for range cr.u32() {
				wire := cr.u32()
				c := cr.elem()
				var term fr.Element
				term.Mul(&c, &w[wire])
				v[k].Add(&v[k], &term)
			}
		}
		var ab fr.Element
		ab.Mul(&v[0], &v[1])
		if !ab.Equal(&v[2]) {
			bad++
		}
	}
	if len(cr.b) != 0 || len(rs[r1csWireLabels]) != 8*int(nWires) {
		t.Fatalf("%d bytes left in constraints, labels %d bytes", len(cr.b), len(rs[r1csWireLabels]))
	}
	return bad
}

// TestSnarkJSAcceptsExport hands the files to snarkjs: r1cs info reads the
// system, wtns check verifies the witness against it.
func TestSnarkJSAcceptsExport(t *testing.T) {
	snark := os.Getenv("PROVEBENCH_SNARKJS")
	if snark == "" {
		t.Skip("PROVEBENCH_SNARKJS not set: run `make check-snarkjs`")
	}
	dir := t.TempDir()
	p := circuit.Params{Constraints: 1 << 7}
	ds, err := circuit.Synthesize(context.Background(), p, circuit.Seed(1, 0, 0), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	wires, _ := ds.Wires()
	write := func(name string, enc func(*bytes.Buffer) error) string {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	r1cs := write("c.r1cs", func(b *bytes.Buffer) error { return WriteR1CS(b, p) })
	wtns := write("w.wtns", func(b *bytes.Buffer) error { return WriteWTNS(b, wires) })
	info, err := exec.Command(snark, "r1cs", "info", r1cs).CombinedOutput()
	if err != nil || !strings.Contains(string(info), "bls12-381") || !strings.Contains(string(info), "# of Constraints: 128") {
		t.Fatalf("snarkjs r1cs info: %v\n%s", err, info)
	}
	check, err := exec.Command(snark, "wtns", "check", r1cs, wtns).CombinedOutput()
	if err != nil || !strings.Contains(string(check), "WITNESS IS CORRECT") {
		t.Fatalf("snarkjs wtns check: %v\n%s", err, check)
	}
	// A wrong witness is refused.
	wires[10].SetUint64(7)
	bad := write("bad.wtns", func(b *bytes.Buffer) error { return WriteWTNS(b, wires) })
	if out, err := exec.Command(snark, "wtns", "check", r1cs, bad).CombinedOutput(); strings.Contains(string(out), "WITNESS IS CORRECT") {
		t.Fatalf("snarkjs accepted a wrong witness (%v)", err)
	}
}
