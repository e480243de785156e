// Package events turns what an external prover says about itself into
// provebench's counters and stage timings: lines it prints (cuzk's TIMELINE
// lines, or any line a regular expression recognises) and endpoints it
// serves (a JSON status page, a Prometheus metrics page).
//
// Every source writes into one Sink. A counter keeps its value and its peak
// exactly, event by event, so a peak between two samples is never missed;
// the sampler only reads the values for the time series. A stage is a
// duration between a start and an end event of the same job.
package events

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Sink holds the counters and stage timings of one repetition. It is safe
// for concurrent use: line readers and endpoint pollers write at once.
type Sink struct {
	mu       sync.Mutex
	names    []string // in order of first use
	counters map[string]*counter
	open     map[stageKey]time.Time
	stages   map[string][]time.Duration
}

type counter struct{ value, peak int64 }

type stageKey struct{ stage, job string }

// NewSink returns an empty sink.
func NewSink() *Sink {
	return &Sink{
		counters: make(map[string]*counter),
		open:     make(map[stageKey]time.Time),
		stages:   make(map[string][]time.Duration),
	}
}

func (s *Sink) get(name string) *counter {
	c := s.counters[name]
	if c == nil {
		c = &counter{}
		s.counters[name] = c
		s.names = append(s.names, name)
	}
	return c
}

// Declare makes counters exist (at 0) before their first event, so series
// and peaks show them even when they never move.
func (s *Sink) Declare(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		s.get(n)
	}
}

// Set sets a counter to v.
func (s *Sink) Set(name string, v int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.get(name)
	c.value = v
	c.peak = max(c.peak, v)
}

// Add moves a counter by delta; it leaves the counter as it was and
// returns false when the sum would not fit in an int64 (it would wrap).
func (s *Sink) Add(name string, delta int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.get(name)
	sum := c.value + delta
	if (delta > 0 && sum < c.value) || (delta < 0 && sum > c.value) {
		return false
	}
	c.value = sum
	c.peak = max(c.peak, c.value)
	return true
}

// Rejections counts the input a reader refused, and keeps why it refused
// the first.
type Rejections struct {
	N     int
	First string
}

func (r *Rejections) add(format string, args ...any) {
	if r.N == 0 {
		r.First = fmt.Sprintf(format, args...)
	}
	r.N++
}

// StageStart marks the start of stage for job at the time at.
func (s *Sink) StageStart(stage, job string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open[stageKey{stage, job}] = at
}

// StageEnd ends the stage of job that StageStart opened and records its
// duration; an end without a start is ignored (the start may have been
// printed before the repetition began to listen).
func (s *Sink) StageEnd(stage, job string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := stageKey{stage, job}
	t0, ok := s.open[k]
	if !ok {
		return
	}
	delete(s.open, k)
	s.stages[stage] = append(s.stages[stage], max(0, at.Sub(t0)))
}

// Names lists the counters in order of first use.
func (s *Sink) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.names)
}

// Values reads the counters named in names (0 for one not seen yet).
func (s *Sink) Values(names []string) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int64, len(names))
	for i, n := range names {
		if c := s.counters[n]; c != nil {
			out[i] = c.value
		}
	}
	return out
}

// Peaks returns every counter's peak; Finals every counter's last value.
func (s *Sink) Peaks() map[string]int64  { return s.each(func(c *counter) int64 { return c.peak }) }
func (s *Sink) Finals() map[string]int64 { return s.each(func(c *counter) int64 { return c.value }) }

func (s *Sink) each(f func(*counter) int64) map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.counters) == 0 {
		return nil
	}
	m := make(map[string]int64, len(s.counters))
	for n, c := range s.counters {
		m[n] = f(c)
	}
	return m
}

// Stages returns the recorded durations of every stage.
func (s *Sink) Stages() map[string][]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]time.Duration, len(s.stages))
	for k, v := range s.stages {
		out[k] = slices.Clone(v)
	}
	return out
}
