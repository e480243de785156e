package supervise

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

// fake is a target whose RSS grows by step per sample and which exits
// when killed, or when stopped with no grace.
type fake struct {
	rss, step uint64
	grace     time.Duration
	exited    chan struct{}
	stops     []Reason
	at        []time.Time
	killed    bool
}

func newFake(step uint64, grace time.Duration) *fake {
	return &fake{step: step, grace: grace, exited: make(chan struct{})}
}

func (f *fake) Sample(at time.Time, _ bool) (uint64, bool) {
	f.rss += f.step
	f.at = append(f.at, at)
	return f.rss, true
}

func (f *fake) Stop(why Reason) time.Duration {
	f.stops = append(f.stops, why)
	if f.grace == 0 {
		close(f.exited)
	}
	return f.grace
}

func (f *fake) Kill() {
	f.killed = true
	close(f.exited)
}

func TestWatchMemoryLimit(t *testing.T) {
	f := newFake(10<<20, 0)
	st, _ := Watch(context.Background(), f.exited, f, Config{Interval: time.Millisecond, MemoryLimit: 35 << 20, What: "RSS"})
	if st.Status != results.StatusMemoryLimit || len(f.stops) != 1 || f.stops[0] != MemoryLimit {
		t.Fatalf("stopped %+v, stops %v", st, f.stops)
	}
	if !strings.Contains(st.Err.Error(), "RSS 40.0 MiB passed the scenario's memory limit of 35.0 MiB") {
		t.Errorf("error %q", st.Err)
	}
	for i := 1; i < len(f.at); i++ {
		if f.at[i].Before(f.at[i-1]) {
			t.Errorf("samples out of order at %d", i)
		}
	}
}

func TestWatchTimeoutThenKill(t *testing.T) {
	f := newFake(0, 20*time.Millisecond)
	st, _ := Watch(context.Background(), f.exited, f, Config{Interval: time.Millisecond, Timeout: 10 * time.Millisecond})
	if st.Status != results.StatusTimeout || !f.killed {
		t.Fatalf("stopped %+v, killed %v: want a timeout, then the kill after the grace", st, f.killed)
	}
}

func TestWatchInterrupt(t *testing.T) {
	f := newFake(0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, _ := Watch(ctx, f.exited, f, Config{Interval: time.Hour})
	if st.Status != results.StatusCancelled || f.stops[0] != Interrupt || !strings.Contains(st.Err.Error(), "interrupt") {
		t.Fatalf("stopped %+v", st)
	}
}

func TestOverLimit(t *testing.T) {
	if err := OverLimit(100<<20, Peak{Bytes: 313 << 20, Source: "tree", Exact: true}); err == nil || !strings.Contains(err.Error(), "between samples") {
		t.Errorf("313 MiB against 100 MiB: %v", err)
	}
	if err := OverLimit(100<<20, Peak{Bytes: 313 << 20, Source: "rusage"}); err != nil {
		t.Errorf("an inexact peak failed the repetition: %v", err)
	}
	if err := OverLimit(0, Peak{Bytes: 313 << 20, Exact: true}); err != nil {
		t.Errorf("no limit: %v", err)
	}
}
