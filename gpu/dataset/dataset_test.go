package dataset

import "testing"

func TestFreeABCThenFree(t *testing.T) {
	const n, wires = 1 << 12, 1<<12 - 1
	d, err := New(0, 0, n, wires, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d.LiveABCBytes() != ABCBytes(n) || d.LiveWireBytes() != WireBytes(wires) {
		t.Fatalf("live %d + %d bytes", d.LiveABCBytes(), d.LiveWireBytes())
	}
	if got := d.FreeABC(); got != ABCBytes(n) {
		t.Fatalf("FreeABC released %d bytes, want %d", got, ABCBytes(n))
	}
	if _, _, _, err := d.ABC(); err != ErrFreed {
		t.Fatalf("ABC after FreeABC: %v", err)
	}
	// The wires outlive the early free: the MSMs still read them.
	if z, err := d.Wires(); err != nil || len(z) != wires {
		t.Fatalf("wires after FreeABC: %d, %v", len(z), err)
	}
	if abc, w := d.Free(); abc != 0 || w != WireBytes(wires) {
		t.Fatalf("Free released %d + %d bytes", abc, w)
	}
	if abc, w := d.Free(); abc != 0 || w != 0 {
		t.Fatal("a second Free released memory again")
	}
	if d.LiveABCBytes() != 0 || d.LiveWireBytes() != 0 {
		t.Fatal("bytes still live after Free")
	}
}

func TestNewRejectsBadShapes(t *testing.T) {
	for _, c := range [][3]int{{0, 10, 2}, {16, 2, 2}, {-1, 10, 2}} {
		if _, err := New(0, 0, c[0], c[1], c[2]); err == nil {
			t.Errorf("New(n=%d, wires=%d, public=%d) succeeded", c[0], c[1], c[2])
		}
	}
}
