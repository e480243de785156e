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

	// clock guards the busy accounting, so that a read sees a kernel's
	// end either wholly or not at all.
	clock     sync.Mutex
	started   time.Time
	busyTotal time.Duration // finished kernels
	runSince  time.Time     // start of the running kernel, zero when idle
	queued    atomic.Int64
}

type kernel struct {
	run      func()
	enqueued time.Time
	waited   time.Duration // time spent queued, set before done closes
	done     chan struct{}
}

func newExecutor() *executor {
	e := &executor{done: make(chan struct{}), started: time.Now()}
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

		e.clock.Lock()
		start := time.Now()
		e.runSince = start
		e.clock.Unlock()
		k.waited = start.Sub(k.enqueued)
		k.run()
		e.clock.Lock()
		e.busyTotal += time.Since(start)
		e.runSince = time.Time{}
		e.clock.Unlock()
		close(k.done)
	}
}

// busy is the time spent running kernels so far, the running one's elapsed
// part included, so that busy time sampled over a window is exact to the
// sample rather than to a kernel; span is the time since the executor
// started, read at the same instant.
func (e *executor) busy() (busy, span time.Duration) {
	e.clock.Lock()
	defer e.clock.Unlock()
	now := time.Now()
	busy = e.busyTotal
	if !e.runSince.IsZero() {
		busy += now.Sub(e.runSince)
	}
	return busy, now.Sub(e.started)
}

// close runs what is queued, then stops the loop.
func (e *executor) close() {
	e.mu.Lock()
	e.closed = true
	e.cond.Signal()
	e.mu.Unlock()
	<-e.done
}
