package hostmem

import (
	"errors"
	"sync"
	"testing"
)

// countingPinner locks nothing; it counts, and fails on demand.
type countingPinner struct {
	mu          sync.Mutex
	pins, unpin int
	fail        bool
}

func (p *countingPinner) Pin([]byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail {
		return errors.New("no locked memory left")
	}
	p.pins++
	return nil
}

func (p *countingPinner) Unpin([]byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unpin++
	return nil
}

// The point of the pool: memory is locked once, and a freed dataset's
// memory is lent again without another lock.
func TestPoolLocksOnceAndReuses(t *testing.T) {
	pin := &countingPinner{}
	pool := NewPool(pin)
	if err := pool.Reserve(2, 4096, 8192); err != nil {
		t.Fatal(err)
	}
	if pin.pins != 4 {
		t.Fatalf("Reserve locked %d buffers, want 4", pin.pins)
	}
	if st := pool.Stats(); st.Bytes != 2*(4096+8192) || st.IdleBytes != st.Bytes {
		t.Fatalf("stats after Reserve = %+v", st)
	}
	a, ok := pool.Get(4096)
	if !ok || !a.Pinned() || a.Size() != 4096 {
		t.Fatalf("Get(4096) = %v, %v", a, ok)
	}
	a.Bytes()[0] = 42
	if st := pool.Stats(); st.IdleBytes != 4096+2*8192 {
		t.Fatalf("idle after Get = %d", st.IdleBytes)
	}
	if n, err := a.Free(); err != nil || n != 4096 {
		t.Fatalf("Free = %d, %v", n, err)
	}
	// The handle is over: its user sees it freed, whoever has the memory
	// next, and a second Free gives nothing back twice.
	if !a.Freed() || a.Bytes() != nil || a.Pinned() {
		t.Fatal("a freed handle still shows its memory")
	}
	if n, _ := a.Free(); n != 0 {
		t.Fatalf("second Free = %d", n)
	}
	b, _ := pool.Get(4096)
	c, _ := pool.Get(4096)
	if b == nil || c == nil {
		t.Fatal("the pool lost a buffer")
	}
	if _, ok := pool.Get(4096); ok {
		t.Fatal("Get served more than was reserved")
	}
	if b.Bytes()[0] != 42 && c.Bytes()[0] != 42 {
		t.Fatal("freed memory was not lent again")
	}
	if pin.pins != 4 || pin.unpin != 0 {
		t.Fatalf("reuse locked or unlocked: %d pins, %d unpins", pin.pins, pin.unpin)
	}
	// Grow locks new memory, which joins the pool when freed.
	d, err := pool.Grow(4096)
	if err != nil || pin.pins != 5 {
		t.Fatalf("Grow: %v, %d pins", err, pin.pins)
	}
	for _, x := range []*Buffer{b, d} {
		if _, err := x.Free(); err != nil {
			t.Fatal(err)
		}
	}
	if st := pool.Stats(); st.Bytes != 3*4096+2*8192 || st.IdleBytes != 2*4096+2*8192 {
		t.Fatalf("stats = %+v", st)
	}
	// Close releases the idle memory now and the lent memory when freed.
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if pin.unpin != 4 {
		t.Fatalf("Close unlocked %d buffers, want the 4 idle ones", pin.unpin)
	}
	if _, err := c.Free(); err != nil {
		t.Fatal(err)
	}
	if pin.unpin != 5 || pool.Stats().Bytes != 0 {
		t.Fatalf("after the last Free: %d unpins, stats %+v", pin.unpin, pool.Stats())
	}
	if _, ok := pool.Get(4096); ok {
		t.Fatal("a closed pool lent memory")
	}
}

func TestPoolReserveFails(t *testing.T) {
	pool := NewPool(&countingPinner{fail: true})
	if err := pool.Reserve(1, 4096); err == nil {
		t.Fatal("Reserve succeeded though locking failed")
	}
	if st := pool.Stats(); st.Bytes != 0 {
		t.Fatalf("a failed lock left %d bytes counted", st.Bytes)
	}
}
