package cpu

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// executor runs kernels one at a time, in submission order, on all the
// threads the device owns: it gives the CPU backend the execution model of a
// GPU (one stream, a queue in front of it, a busy time), so the pipeline's
// queue depth and busy fraction mean the same thing on both backends.
type executor struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []*kernel
	closed  bool
	done    chan struct{}

	busyNanos atomic.Int64 // finished kernels
	runSince  atomic.Int64 // start of the running kernel (UnixNano), 0 when idle
	queued    atomic.Int64
}

type kernel struct {
	run      func()
	enqueued time.Time
	waited   time.Duration // time spent queued, set before done closes
	done     chan struct{}
}

func newExecutor() *executor {
	e := &executor{done: make(chan struct{})}
	e.cond = sync.NewCond(&e.mu)
	go e.loop()
	return e
}

// errClosed is returned by submit after close.
var errClosed = errors.New("cpu backend: device closed")

// submit queues fn and returns at once; the kernel's done channel closes
// when fn has run.
func (e *executor) submit(fn func()) (*kernel, error) {
	k := &kernel{run: fn, enqueued: time.Now(), done: make(chan struct{})}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errClosed
	}
	e.pending = append(e.pending, k)
	e.queued.Add(1)
	e.cond.Signal()
	return k, nil
}

func (e *executor) loop() {
	defer close(e.done)
	for {
		e.mu.Lock()
		for len(e.pending) == 0 && !e.closed {
			e.cond.Wait()
		}
		if len(e.pending) == 0 {
			e.mu.Unlock()
			return
		}
		k := e.pending[0]
		e.pending[0] = nil
		e.pending = e.pending[1:]
		e.queued.Add(-1)
		e.mu.Unlock()

		start := time.Now()
		k.waited = start.Sub(k.enqueued)
		e.runSince.Store(start.UnixNano())
		k.run()
		e.busyNanos.Add(int64(time.Since(start)))
		e.runSince.Store(0)
		close(k.done)
	}
}

// busy is the time spent running kernels so far, the running one's elapsed
// part included, so that busy time sampled over a window is exact to the
// sample rather than to a kernel. The two loads can straddle a kernel's end
// and count its tail twice or not at all: at most one sample's error.
func (e *executor) busy() time.Duration {
	b := e.busyNanos.Load()
	if since := e.runSince.Load(); since != 0 {
		b += max(0, time.Now().UnixNano()-since)
	}
	return time.Duration(b)
}

// close runs what is queued, then stops the loop.
func (e *executor) close() {
	e.mu.Lock()
	e.closed = true
	e.cond.Signal()
	e.mu.Unlock()
	<-e.done
}
