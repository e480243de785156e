// Package dataset holds one synthesized partition: the a, b, c evaluation
// vectors and the wire assignment, in memory outside the Go heap.
//
// The pipeline owns a Dataset from synthesis to deallocation. The prover
// reads a/b/c only in the NTT region (its Start); after that the caller may
// release them with FreeABC (the "early a/b/c free") while the MSMs still
// read the wires. Free releases whatever is left.
package dataset

import (
	"errors"
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/hostmem"
)

// ElementBytes is the size of one field element in memory.
const ElementBytes = fr.Bytes

// Dataset is one partition's synthesized data.
type Dataset struct {
	// Proof and Partition identify the partition within its batch.
	Proof, Partition int
	// N is the domain size: the length of A, B and C.
	N int
	// NumPublic is the number of public inputs, not counting the constant
	// one wire, which is always wire 0.
	NumPublic int

	mu                sync.Mutex
	abc               [3]*hostmem.Buffer
	wires             *hostmem.Buffer
	a, b, c, wireVals []fr.Element
}

// New allocates a dataset for a domain of n and numWires wires in fresh
// anonymous memory. The memory is committed as it is written.
func New(proof, partition, n, numWires, numPublic int) (*Dataset, error) {
	return NewWith(hostmem.Alloc, proof, partition, n, numWires, numPublic)
}

// Allocator supplies a dataset's buffers: hostmem.Alloc, or a GPU
// backend's pool of page-locked memory (whose contents are not zeroed: the
// synthesis writes every element).
type Allocator func(size int64) (*hostmem.Buffer, error)

// NewWith is New with the buffers from alloc.
func NewWith(alloc Allocator, proof, partition, n, numWires, numPublic int) (*Dataset, error) {
	if n <= 0 || numWires <= numPublic {
		return nil, fmt.Errorf("dataset: invalid shape n=%d wires=%d public=%d", n, numWires, numPublic)
	}
	d := &Dataset{Proof: proof, Partition: partition, N: n, NumPublic: numPublic}
	vecs := [3]*[]fr.Element{&d.a, &d.b, &d.c}
	for i := range d.abc {
		buf, s, err := allocSlice(alloc, n)
		if err != nil {
			d.Free()
			return nil, fmt.Errorf("dataset: allocate %c: %w", "abc"[i], err)
		}
		d.abc[i], *vecs[i] = buf, s
	}
	buf, s, err := allocSlice(alloc, numWires)
	if err != nil {
		d.Free()
		return nil, fmt.Errorf("dataset: allocate wires: %w", err)
	}
	d.wires, d.wireVals = buf, s
	return d, nil
}

func allocSlice(alloc Allocator, n int) (*hostmem.Buffer, []fr.Element, error) {
	b, err := alloc(int64(n) * ElementBytes)
	if err != nil {
		return nil, nil, err
	}
	s, err := hostmem.Slice[fr.Element](b)
	if err != nil {
		_, _ = b.Free()
		return nil, nil, err
	}
	return b, s, nil
}

// CopyFrom overwrites the dataset's vectors with src's, which must have the
// same shape: the cached-witness synthesis fills a partition this way, with
// the same allocations and lifetimes as a computed one and none of the
// arithmetic.
func (d *Dataset) CopyFrom(src *Dataset) error {
	if d == src {
		return nil
	}
	sa, sb, sc, err := src.ABC()
	if err != nil {
		return fmt.Errorf("dataset: copy: source: %w", err)
	}
	sw, err := src.Wires()
	if err != nil {
		return fmt.Errorf("dataset: copy: source: %w", err)
	}
	a, b, c, err := d.ABC()
	if err != nil {
		return fmt.Errorf("dataset: copy: %w", err)
	}
	w, err := d.Wires()
	if err != nil {
		return fmt.Errorf("dataset: copy: %w", err)
	}
	if len(a) != len(sa) || len(w) != len(sw) || d.NumPublic != src.NumPublic {
		return fmt.Errorf("dataset: copy: shape n=%d wires=%d from n=%d wires=%d", len(a), len(w), len(sa), len(sw))
	}
	copy(a, sa)
	copy(b, sb)
	copy(c, sc)
	copy(w, sw)
	return nil
}

// ABCBytes is the size of the a, b and c vectors together for a domain of n.
func ABCBytes(n int) int64 { return 3 * int64(n) * ElementBytes }

// WireBytes is the size of an assignment of numWires wires.
func WireBytes(numWires int) int64 { return int64(numWires) * ElementBytes }

// ErrFreed is returned by the accessors of a released vector.
var ErrFreed = errors.New("dataset: vector already freed")

// ABC returns the a, b and c vectors. They are mutable: the prover uses them
// as scratch space in its NTT region.
func (d *Dataset) ABC() (a, b, c []fr.Element, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.a == nil {
		return nil, nil, nil, ErrFreed
	}
	return d.a, d.b, d.c, nil
}

// Wires returns the full assignment: the one wire, the public inputs, then
// the private wires.
func (d *Dataset) Wires() ([]fr.Element, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.wireVals == nil {
		return nil, ErrFreed
	}
	return d.wireVals, nil
}

// Public returns the public inputs (without the one wire).
func (d *Dataset) Public() ([]fr.Element, error) {
	w, err := d.Wires()
	if err != nil {
		return nil, err
	}
	return w[1 : 1+d.NumPublic], nil
}

// LiveABCBytes is what a/b/c still occupy: 0 once FreeABC has run.
func (d *Dataset) LiveABCBytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var n int64
	for _, b := range d.abc {
		if !b.Freed() {
			n += b.Size()
		}
	}
	return n
}

// LiveWireBytes is what the assignment still occupies.
func (d *Dataset) LiveWireBytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.wires.Freed() {
		return 0
	}
	return d.wires.Size()
}

// FreeABC unmaps a, b and c and returns the bytes released (0 if they were
// already released). Slices from ABC must not be used afterwards.
func (d *Dataset) FreeABC() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.freeABCLocked()
}

func (d *Dataset) freeABCLocked() int64 {
	var n int64
	for _, b := range d.abc {
		// munmap of a mapping we own with its own length cannot fail
		// short of memory corruption; a failure leaves the bytes counted
		// as live, which the tracker's balance check then exposes.
		freed, _ := b.Free()
		n += freed
	}
	d.a, d.b, d.c = nil, nil, nil
	return n
}

// Free releases everything still held and returns the bytes released as
// (abc, wires).
func (d *Dataset) Free() (abc, wires int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	abc = d.freeABCLocked()
	wires, _ = d.wires.Free()
	d.wireVals = nil
	return abc, wires
}

// Pin page-locks every vector still held with p, so a GPU backend uploads
// it by DMA with no staging copy; Free and FreeABC unlock before they unmap.
func (d *Dataset) Pin(p hostmem.Pinner) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, b := range append(d.abc[:], d.wires) {
		if b.Freed() {
			continue
		}
		if err := b.Pin(p); err != nil {
			return fmt.Errorf("dataset: %w", err)
		}
	}
	return nil
}

// Pinned reports whether the vectors still held are page-locked (false for
// a dataset with nothing left).
func (d *Dataset) Pinned() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	live := 0
	for _, b := range append(d.abc[:], d.wires) {
		if b.Freed() {
			continue
		}
		if !b.Pinned() {
			return false
		}
		live++
	}
	return live > 0
}
