package hostmem

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Pool keeps page-locked memory for reuse, as a proving daemon keeps its
// pinned host buffers (cuzk allocates them once): locking pages
// (cuMemHostRegister) commits and maps every page for the device and takes
// the driver's locks, and doing it for each dataset while the device works
// stalls the device (docs/gpu.md, "Where the first-use stall went", has
// the figures). Pooled memory is
// locked once, at Reserve or Grow, and a lent Buffer's Free hands it back
// to the pool instead of unmapping it.
//
// The price is that a pool's memory stays resident: RSS does not fall when
// the pipeline frees a pooled dataset, it falls when the pool closes. The
// pool reports what it holds (Stats) so that the RSS account can say so.
//
// Memory is matched by size: a pipeline asks for a few sizes only (a, b, c
// and the wires).
type Pool struct {
	pinner Pinner

	mu     sync.Mutex
	idle   map[int64][]*Buffer // the pool's own handles, locked
	closed bool
	total  int64 // bytes the pool owns, idle or lent
	idleB  int64 // bytes of the idle ones
}

// NewPool returns an empty pool whose memory p locks.
func NewPool(p Pinner) *Pool {
	return &Pool{pinner: p, idle: make(map[int64][]*Buffer)}
}

// Reserve allocates and locks n buffers of each size, idle until Get. The
// buffers are made in parallel and their pages touched before they are
// locked: the kernel then zeroes them on every core at once, where the
// driver's registration would fault them in one by one (tens of GiB take
// seconds either way; this is a warm start's setup, before the clock).
func (p *Pool) Reserve(n int, sizes ...int64) error {
	var g errgroup.Group
	g.SetLimit(max(1, runtime.GOMAXPROCS(0)))
	for range n {
		for _, size := range sizes {
			g.Go(func() error {
				own, err := p.newLocked(size)
				if err != nil {
					return err
				}
				p.mu.Lock()
				p.idle[size] = append(p.idle[size], own)
				p.idleB += size
				p.mu.Unlock()
				return nil
			})
		}
	}
	return g.Wait()
}

// newLocked maps and locks size bytes, counted in the pool.
func (p *Pool) newLocked(size int64) (*Buffer, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errors.New("hostmem: pool closed")
	}
	own, err := Alloc(size)
	if err != nil {
		return nil, err
	}
	mem, page := own.Bytes(), os.Getpagesize()
	for i := 0; i < len(mem); i += page {
		mem[i] = 0 // commit the page here, on this goroutine's core
	}
	if err := own.Pin(p.pinner); err != nil {
		_, _ = own.Free()
		return nil, fmt.Errorf("hostmem: pool: %w", err)
	}
	p.mu.Lock()
	p.total += size
	p.mu.Unlock()
	return own, nil
}

// lend wraps pooled memory in a fresh handle: a user's Free ends that
// handle (its Bytes are nil afterwards, whoever gets the memory next) and
// returns the memory.
func (p *Pool) lend(own *Buffer) *Buffer {
	return &Buffer{mem: own.mem, size: own.size, pool: p, own: own}
}

// Get lends idle memory of size bytes, or reports false when the pool has
// none: the caller then decides between new locked memory (Grow) and
// ordinary memory. Its contents are whatever its last user left.
func (p *Pool) Get(size int64) (*Buffer, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.idle[size]
	if p.closed || len(list) == 0 {
		return nil, false
	}
	own := list[len(list)-1]
	p.idle[size] = list[:len(list)-1]
	p.idleB -= size
	return p.lend(own), true
}

// Grow lends newly locked memory of size bytes; it joins the pool when the
// user frees it.
func (p *Pool) Grow(size int64) (*Buffer, error) {
	own, err := p.newLocked(size)
	if err != nil {
		return nil, err
	}
	return p.lend(own), nil
}

// giveBack takes lent memory back; after Close it is released instead.
func (p *Pool) giveBack(own *Buffer) error {
	p.mu.Lock()
	if !p.closed {
		p.idle[own.size] = append(p.idle[own.size], own)
		p.idleB += own.size
		p.mu.Unlock()
		return nil
	}
	p.total -= own.size
	p.mu.Unlock()
	_, err := own.Free()
	return err
}

// PoolStats is what a pool holds.
type PoolStats struct {
	// Bytes is all the memory the pool owns, lent or idle: resident and
	// locked. IdleBytes is the part no user holds now.
	Bytes, IdleBytes int64
}

// Stats reads the pool's sizes; cheap enough to sample every millisecond.
func (p *Pool) Stats() PoolStats {
	if p == nil {
		return PoolStats{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Bytes: p.total, IdleBytes: p.idleB}
}

// Close unlocks and unmaps the idle memory; memory still lent is released
// when its user frees it.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var idle []*Buffer
	for _, list := range p.idle {
		idle = append(idle, list...)
	}
	p.idle = nil
	p.total -= p.idleB
	p.idleB = 0
	p.mu.Unlock()
	var errs []error
	for _, own := range idle {
		if _, err := own.Free(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
