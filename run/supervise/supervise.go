package supervise

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

// DefaultInterval is the sampling interval when a scenario sets none.
const DefaultInterval = 10 * time.Millisecond

// progressEvery is how often the loop reports progress.
const progressEvery = 200 * time.Millisecond

// Reason is why the loop stops a target.
type Reason int

const (
	Interrupt   Reason = iota + 1 // the run's context ended
	Timeout                       // the scenario's timeout passed
	MemoryLimit                   // a sample passed the scenario's memory limit
)

// A Target is one repetition's process (or process tree), as a driver
// exposes it to the loop. The loop calls it from one goroutine.
type Target interface {
	// Sample reads and records one sample, stamped at; detail asks for
	// the costlier figures too (the kernel's peak, PSS), at the
	// Config.DetailInterval. It returns the resident set to hold to the
	// memory limit, and false when nothing could be read.
	Sample(at time.Time, detail bool) (rss uint64, ok bool)
	// Stop asks the target to stop for a reason and returns how long it
	// gets before Kill; 0 when Stop has already ended it.
	Stop(why Reason) (grace time.Duration)
	// Kill ends the target at once.
	Kill()
}

// Config is what the loop enforces.
type Config struct {
	Interval       time.Duration // between samples; DefaultInterval when 0
	DetailInterval time.Duration // between detailed samples; every sample when 0
	Timeout        time.Duration // 0: none
	MemoryLimit    int64         // bytes; 0: none
	// What names the figure Sample returns in the memory-limit message:
	// "RSS", "RSS of the process tree".
	What string
	// Progress, when set, is told the elapsed time and the latest RSS a
	// few times a second.
	Progress func(at time.Time, rss uint64)
}

// Stopped says why the loop stopped the target; Status is "" when it ran
// to its end by itself.
type Stopped struct {
	Status results.Status
	Err    error
}

// Watch samples t until exited is closed, and stops it at the timeout, at
// the memory limit or when ctx ends. It returns why it stopped the target,
// if it did, and the moment the target had exited.
func Watch(ctx context.Context, exited <-chan struct{}, t Target, c Config) (Stopped, time.Time) {
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	detailEvery := 1
	if c.DetailInterval > interval {
		detailEvery = int(c.DetailInterval / interval)
	}
	var deadline <-chan time.Time
	if c.Timeout > 0 {
		d := time.NewTimer(c.Timeout)
		defer d.Stop()
		deadline = d.C
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()

	var stopped Stopped
	var killAt <-chan time.Time
	stop := func(why Reason, status results.Status, err error) {
		if stopped.Status != "" {
			return
		}
		stopped = Stopped{Status: status, Err: err}
		if grace := t.Stop(why); grace > 0 {
			killAt = time.After(grace)
		}
	}
	interrupted := ctx.Done()
	var lastProgress time.Time
	for ticks := 0; ; {
		select {
		case <-exited:
			return stopped, time.Now()
		case <-interrupted:
			interrupted = nil
			stop(Interrupt, results.StatusCancelled, InterruptError(ctx))
		case <-deadline:
			stop(Timeout, results.StatusTimeout, fmt.Errorf("ran past the scenario's timeout of %s", c.Timeout))
		case <-killAt:
			killAt = nil
			t.Kill()
		case <-tick.C:
			// Stamped when read, not with the tick's value (when the
			// tick was due): under load (the race detector) those
			// drifted apart, and rows came out of time order.
			now := time.Now()
			rss, ok := t.Sample(now, ticks%detailEvery == 0)
			if !ok {
				continue
			}
			ticks++
			if c.MemoryLimit > 0 && rss > uint64(c.MemoryLimit) {
				stop(MemoryLimit, results.StatusMemoryLimit, fmt.Errorf("%s %s passed the scenario's memory limit of %s",
					c.What, units.FormatBytes(int64(rss)), units.FormatBytes(c.MemoryLimit)))
			}
			if c.Progress != nil && now.Sub(lastProgress) >= progressEvery {
				lastProgress = now
				c.Progress(now, rss)
			}
		}
	}
}

// Peak is a repetition's final peak as its driver measured it.
type Peak struct {
	Bytes  uint64
	Source string // results.PeakFrom*
	// Exact is true when Bytes is the target's own memory and no more (a
	// figure that may include another process's, as wait4's ru_maxrss of
	// a child may include its parent's, cannot fail a repetition).
	Exact bool
}

// OverLimit is the final check: the error to record when the peak passed
// the limit, which the samples may have missed (it rose and fell between
// two of them); nil otherwise.
func OverLimit(limit int64, p Peak) error {
	if limit <= 0 || !p.Exact || p.Bytes <= uint64(limit) {
		return nil
	}
	return fmt.Errorf("peak RSS %s (%s) passed the scenario's memory limit of %s between samples",
		units.FormatBytes(int64(p.Bytes)), p.Source, units.FormatBytes(limit))
}

// InterruptError says why a repetition was stopped when the run's context
// ended: in words for an interrupt ("context canceled" tells a user
// nothing), with the cause when the context was given one.
func InterruptError(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return fmt.Errorf("stopped before it finished: %w", cause)
	}
	return errors.New("stopped by an interrupt before it finished")
}
