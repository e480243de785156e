package groth16

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/hostmem"
)

// Key files hold the points in their in-memory layout (Montgomery form, as
// gnark-crypto and ICICLE both use), so loading is an mmap: no parsing, no
// copy, and processes proving at the same size share one page cache copy.
// The header records the layout of the generators so a file written by
// another architecture or library version is rejected, not misread.

const (
	keyMagic = "PBGROTH1"
	// Format 2: the circuit's wires are ordered full-width first, bits last,
	// and the header records the bit fraction.
	keyFormat     = 2
	keyHeaderSize = 4096 // one page: the vectors start page-aligned
	maxIC         = 8
	g1Size        = int(unsafe.Sizeof(bls12381.G1Affine{}))
	g2Size        = int(unsafe.Sizeof(bls12381.G2Affine{}))
)

type rawG1 [g1Size]byte
type rawG2 [g2Size]byte

func g1Raw(p *bls12381.G1Affine) rawG1 { return *(*rawG1)(unsafe.Pointer(p)) }
func g2Raw(p *bls12381.G2Affine) rawG2 { return *(*rawG2)(unsafe.Pointer(p)) }
func g1From(r *rawG1) bls12381.G1Affine {
	return *(*bls12381.G1Affine)(unsafe.Pointer(r))
}
func g2From(r *rawG2) bls12381.G2Affine {
	return *(*bls12381.G2Affine)(unsafe.Pointer(r))
}

// keyHeader is the fixed part of a key file, little-endian.
type keyHeader struct {
	Magic                         [8]byte
	Format                        uint32
	Kind                          uint32 // 1 setup, 2 random
	Domain, NumWires, NumPub      uint64
	G1Gen                         rawG1
	G2Gen                         rawG2
	Alpha1, Beta1, Delta1         rawG1
	Beta2, Delta2, Gamma2         rawG2
	NumIC                         uint64
	IC                            [maxIC]rawG1
	OffA, OffB1, OffL, OffH       uint64
	OffB2, FileSize, BitsPerMille uint64
}

func kindCode(k KeyKind) uint32 {
	if k == KindSetup {
		return 1
	}
	return 2
}

// keyLayout is where each vector sits in a file for a given shape.
type keyLayout struct {
	offA, offB1, offL, offH, offB2, size int64
}

func layoutFor(domain, wires, public int) keyLayout {
	align := func(x int64) int64 { return (x + keyHeaderSize - 1) / keyHeaderSize * keyHeaderSize }
	var l keyLayout
	l.offA = keyHeaderSize
	l.offB1 = align(l.offA + int64(wires*g1Size))
	l.offL = align(l.offB1 + int64(wires*g1Size))
	l.offH = align(l.offL + int64((wires-1-public)*g1Size))
	l.offB2 = align(l.offH + int64((domain-1)*g1Size))
	l.size = align(l.offB2 + int64(wires*g2Size))
	return l
}

func newHeader(kind KeyKind, p circuit.Params, wires, public int, l keyLayout) keyHeader {
	domain := p.Constraints
	_, _, g1, g2 := bls12381.Generators()
	h := keyHeader{
		Format: keyFormat, Kind: kindCode(kind),
		Domain: uint64(domain), NumWires: uint64(wires), NumPub: uint64(public),
		G1Gen: g1Raw(&g1), G2Gen: g2Raw(&g2),
		OffA: uint64(l.offA), OffB1: uint64(l.offB1), OffL: uint64(l.offL),
		OffH: uint64(l.offH), OffB2: uint64(l.offB2), FileSize: uint64(l.size),
		BitsPerMille: uint64(p.EffectiveBitsPerMille()),
	}
	copy(h.Magic[:], keyMagic)
	return h
}

func (h *keyHeader) encode() ([]byte, error) {
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, h); err != nil {
		return nil, err
	}
	if buf.Len() > keyHeaderSize {
		return nil, fmt.Errorf("key header is %d bytes, more than a page", buf.Len())
	}
	out := make([]byte, keyHeaderSize)
	copy(out, buf.Bytes())
	return out, nil
}

// vectorsIn views the point vectors of a mapped key file.
func vectorsIn(mem []byte, l keyLayout, domain, wires, public int, pk *ProvingKey) {
	g1s := func(off int64, n int) []bls12381.G1Affine {
		return unsafe.Slice((*bls12381.G1Affine)(unsafe.Pointer(&mem[off])), n)
	}
	pk.A = g1s(l.offA, wires)
	pk.B1 = g1s(l.offB1, wires)
	pk.L = g1s(l.offL, wires-1-public)
	pk.H = g1s(l.offH, domain-1)
	pk.B2 = unsafe.Slice((*bls12381.G2Affine)(unsafe.Pointer(&mem[l.offB2])), wires)
}

// ErrKeyFormat marks a key file that cannot be used (truncated, from another
// format version or memory layout).
var ErrKeyFormat = errors.New("unusable key file")

// LoadKey maps a key file read-only. The proving key's vectors point into
// the mapping until Close. For a setup key the verifying key comes back too;
// for a random key it is nil.
func LoadKey(path string) (*ProvingKey, *VerifyingKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("load key: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("load key: %w", err)
	}
	h, err := readKeyHeader(f, path)
	if err != nil {
		return nil, nil, err
	}
	pk, err := mapKey(f, st.Size(), path, h)
	if err != nil {
		return nil, nil, err
	}
	if h.Kind != 1 {
		return pk, nil, nil
	}
	pk.Kind = KindSetup
	vk := &VerifyingKey{Alpha1: pk.Alpha1, Beta2: pk.Beta2, Delta2: pk.Delta2, Gamma2: g2From(&h.Gamma2)}
	for i := 0; i < int(h.NumIC); i++ {
		vk.IC = append(vk.IC, g1From(&h.IC[i]))
	}
	return pk, vk, nil
}

// readKeyHeader reads f's header and checks it describes a key this build
// can map: its format, this build's memory layout and a consistent shape.
func readKeyHeader(f *os.File, path string) (*keyHeader, error) {
	h := &keyHeader{}
	if err := binary.Read(f, binary.LittleEndian, h); err != nil {
		return nil, fmt.Errorf("load key %s: header: %w (%w)", path, err, ErrKeyFormat)
	}
	_, _, g1, g2 := bls12381.Generators()
	switch {
	case string(h.Magic[:]) != keyMagic || h.Format != keyFormat:
		return nil, fmt.Errorf("load key %s: not a format-%d provebench key (%w)", path, keyFormat, ErrKeyFormat)
	case h.G1Gen != g1Raw(&g1) || h.G2Gen != g2Raw(&g2):
		return nil, fmt.Errorf("load key %s: written with another memory layout (%w)", path, ErrKeyFormat)
	case h.NumIC > maxIC || h.NumWires <= h.NumPub+1 || h.Domain < 2:
		return nil, fmt.Errorf("load key %s: inconsistent header (%w)", path, ErrKeyFormat)
	case h.BitsPerMille < circuit.MinBitsPerMille || h.BitsPerMille > circuit.MaxBitsPerMille:
		return nil, fmt.Errorf("load key %s: bit fraction %d/1000 (%w)", path, h.BitsPerMille, ErrKeyFormat)
	}
	// The shape is checked before any offset is computed from it: sizes
	// from a corrupt header would overflow the layout's arithmetic.
	if err := checkHeaderShape(h); err != nil {
		return nil, fmt.Errorf("load key %s: %w (%w)", path, err, ErrKeyFormat)
	}
	return h, nil
}

// mapKey maps f, of size bytes, as the random key h describes, once its
// offsets and size are the layout's; the caller makes it a setup key.
func mapKey(f *os.File, size int64, path string, h *keyHeader) (*ProvingKey, error) {
	domain, wires, public := int(h.Domain), int(h.NumWires), int(h.NumPub)
	l := layoutFor(domain, wires, public)
	if uint64(l.offA) != h.OffA || uint64(l.offB2) != h.OffB2 || uint64(l.size) != h.FileSize || size != l.size {
		return nil, fmt.Errorf("load key %s: size %d, expected %d (%w)", path, size, l.size, ErrKeyFormat)
	}
	buf, err := hostmem.MapFile(int(f.Fd()), 0, l.size)
	if err != nil {
		return nil, fmt.Errorf("load key %s: %w", path, err)
	}
	pk := &ProvingKey{
		Kind:   KindRandom,
		Domain: domain, NumWires: wires, NumPublic: public, BitsPerMille: int(h.BitsPerMille),
		Alpha1: g1From(&h.Alpha1), Beta1: g1From(&h.Beta1), Delta1: g1From(&h.Delta1),
		Beta2: g2From(&h.Beta2), Delta2: g2From(&h.Delta2),
		backing: buf,
	}
	vectorsIn(buf.Bytes(), l, domain, wires, public, pk)
	if err := pk.CheckShape(); err != nil {
		_ = pk.Close()
		return nil, fmt.Errorf("load key %s: %w (%w)", path, err, ErrKeyFormat)
	}
	return pk, nil
}

// checkHeaderShape checks a header's sizes against the circuit of its
// domain: a key file only ever holds provebench's circuit.
func checkHeaderShape(h *keyHeader) error {
	if h.Domain > 1<<circuit.MaxLogConstraints {
		return fmt.Errorf("domain %d is beyond 2^%d", h.Domain, circuit.MaxLogConstraints)
	}
	p := circuit.Params{Constraints: int(h.Domain)}
	if err := p.Validate(); err != nil {
		return err
	}
	switch {
	case h.NumWires != uint64(p.NumWires()) || h.NumPub != circuit.NumPublic:
		return fmt.Errorf("%d wires, %d public; circuit 2^%d has %d, %d", h.NumWires, h.NumPub, p.LogConstraints(), p.NumWires(), circuit.NumPublic)
	case h.Kind != 1 && h.Kind != 2:
		return fmt.Errorf("key kind %d", h.Kind)
	case h.Kind == 1 && h.NumIC != 1+circuit.NumPublic:
		return fmt.Errorf("setup key with %d IC points, want %d", h.NumIC, 1+circuit.NumPublic)
	}
	return nil
}

// writeKeyFile writes a key held in memory (a setup's output) to path.
func writeKeyFile(path string, pk *ProvingKey, vk *VerifyingKey) error {
	l := layoutFor(pk.Domain, pk.NumWires, pk.NumPublic)
	h := newHeader(pk.Kind, pk.Params(), pk.NumWires, pk.NumPublic, l)
	h.Alpha1, h.Beta1, h.Delta1 = g1Raw(&pk.Alpha1), g1Raw(&pk.Beta1), g1Raw(&pk.Delta1)
	h.Beta2, h.Delta2 = g2Raw(&pk.Beta2), g2Raw(&pk.Delta2)
	if vk != nil {
		if len(vk.IC) > maxIC {
			return fmt.Errorf("write key: %d IC points, at most %d", len(vk.IC), maxIC)
		}
		h.Gamma2 = g2Raw(&vk.Gamma2)
		h.NumIC = uint64(len(vk.IC))
		for i := range vk.IC {
			h.IC[i] = g1Raw(&vk.IC[i])
		}
	}
	return writeMapped(path, h, l, func(mem []byte) error {
		dst := &ProvingKey{}
		vectorsIn(mem, l, pk.Domain, pk.NumWires, pk.NumPublic, dst)
		copy(dst.A, pk.A)
		copy(dst.B1, pk.B1)
		copy(dst.L, pk.L)
		copy(dst.H, pk.H)
		copy(dst.B2, pk.B2)
		return nil
	})
}
