package hostmem

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// rss reads the process's resident set from /proc/self/statm (pages).
func rss(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	f := strings.Fields(string(data))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// TestFreeReturnsMemory is the reason this package exists: RSS must fall by
// the buffer's size as soon as Free returns, with no garbage collection.
func TestFreeReturnsMemory(t *testing.T) {
	const size = 64 << 20
	buf, err := Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	mem := buf.Bytes()
	for i := 0; i < len(mem); i += os.Getpagesize() {
		mem[i] = 1
	}
	before := rss(t)
	n, err := buf.Free()
	if err != nil || n != size {
		t.Fatalf("Free = %d, %v; want %d, nil", n, err, size)
	}
	after := rss(t)
	if drop := before - after; drop < size*9/10 {
		t.Fatalf("RSS fell by %d bytes after freeing %d (before %d, after %d)", drop, size, before, after)
	}
	if n, err := buf.Free(); n != 0 || err != nil {
		t.Fatalf("second Free = %d, %v; want 0, nil", n, err)
	}
	if !buf.Freed() || buf.Bytes() != nil {
		t.Fatal("freed buffer still exposes memory")
	}
}

func TestSlice(t *testing.T) {
	buf, s, err := AllocSlice[[4]uint64](1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1000 || buf.Size() != 32000 {
		t.Fatalf("len %d size %d", len(s), buf.Size())
	}
	s[999][3] = 7
	if buf.Bytes()[len(buf.Bytes())-8] != 7 {
		t.Fatal("slice does not alias the mapping")
	}
	if _, err := Slice[[3]uint64](buf); err == nil {
		t.Fatal("expected an error for a size that does not divide the buffer")
	}
	buf.Free()
	if _, err := Slice[[4]uint64](buf); err != ErrFreed {
		t.Fatalf("Slice after Free: %v", err)
	}
}

func TestAllocRejectsBadSizes(t *testing.T) {
	for _, n := range []int64{0, -1} {
		if _, err := Alloc(n); err == nil {
			t.Errorf("Alloc(%d) succeeded", n)
		}
	}
}

// recordingPinner is a Pinner that records what it was asked.
type recordingPinner struct {
	pinned   map[uintptr]int
	calls    []string
	unpinErr error
}

func (r *recordingPinner) Pin(mem []byte) error {
	r.pinned[uintptr(unsafe.Pointer(&mem[0]))] = len(mem)
	r.calls = append(r.calls, "pin")
	return nil
}

func (r *recordingPinner) Unpin(mem []byte) error {
	delete(r.pinned, uintptr(unsafe.Pointer(&mem[0])))
	r.calls = append(r.calls, "unpin")
	return r.unpinErr
}

func TestPinnedBufferUnpinsBeforeFree(t *testing.T) {
	p := &recordingPinner{pinned: map[uintptr]int{}}
	b, err := Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Pin(p); err != nil {
		t.Fatal(err)
	}
	if err := b.Pin(p); err != nil || len(p.calls) != 1 || !b.Pinned() {
		t.Fatalf("second Pin: %v, calls %v, pinned %v", err, p.calls, b.Pinned())
	}
	if n, err := b.Free(); err != nil || n != 1<<20 {
		t.Fatalf("Free = %d, %v", n, err)
	}
	if len(p.pinned) != 0 || len(p.calls) != 2 || b.Pinned() {
		t.Fatalf("after Free: still pinned %v, calls %v", p.pinned, p.calls)
	}
	if err := b.Pin(p); !errors.Is(err, ErrFreed) {
		t.Fatalf("Pin after Free = %v, want ErrFreed", err)
	}

	// A failed unlock is reported, and the memory is unmapped all the same.
	p.unpinErr = errors.New("driver says no")
	b, _ = Alloc(1 << 16)
	_ = b.Pin(p)
	if n, err := b.Free(); n != 1<<16 || !errors.Is(err, p.unpinErr) || !b.Freed() {
		t.Fatalf("Free with failing unpin = %d, %v, freed %v", n, err, b.Freed())
	}
}
