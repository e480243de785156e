package pipeline

import (
	"math"
	"testing"
	"time"
)

// feed drives a pacer's control law with a GPU that starts one partition
// every gpu and a fixed queue depth, for n control periods of dt.
func feed(p *pacer, at time.Duration, n int, dt, gpu time.Duration, depth int64) time.Duration {
	for range n {
		at += dt
		p.control(at, depth, int64(at/gpu))
	}
	return at
}

func TestPacerControlLaw(t *testing.T) {
	cfg := PacerConfig{TargetDepth: 3, Kp: 0.1, Ki: 0.01, Interval: 10 * time.Millisecond, MaxInFlight: 10}
	var start time.Duration
	p := newPacer(cfg, 4, NewTracker())
	if p.tokens != 7 {
		t.Fatalf("bootstrap grant %v, want synthesis workers + target = 7", p.tokens)
	}

	// Before two GPU starts the rate is unknown and nothing accrues.
	at := feed(p, start, 3, 10*time.Millisecond, time.Hour, 0)
	if p.rate != 0 || p.known {
		t.Fatalf("rate %v known %v before any GPU start", p.rate, p.known)
	}

	// On target, the admission rate follows the GPU: 100 partitions/s.
	at = feed(p, at, 200, 10*time.Millisecond, 10*time.Millisecond, 3)
	if got := p.rate; !(got >= 99 && got <= 101) { // NaN fails too
		t.Errorf("on target: rate %.2f/s, want the GPU's 100/s", got)
	}
	if p.multiplier != 1 {
		t.Errorf("on target: multiplier %v", p.multiplier)
	}

	// Queue too deep: admission slows below the GPU's rate, and the
	// integral keeps pushing down while the error lasts.
	feed(p, at, 1, 10*time.Millisecond, 10*time.Millisecond, 6)
	m1 := p.multiplier
	// One period of error -3 at one GPU interval per period adds -3 to
	// the integral: m = 1 + kp*(-3) + ki*(-3).
	if want := 1 + 0.1*(3-6) + 0.01*(3-6); !(math.Abs(m1-want) <= 0.005) {
		t.Errorf("3 over target: multiplier %.3f, want about %.3f", m1, want)
	}
	at = feed(p, at+10*time.Millisecond, 50, 10*time.Millisecond, 10*time.Millisecond, 6)
	if !(p.multiplier < m1) {
		t.Errorf("sustained surplus: multiplier %.3f did not fall below %.3f", p.multiplier, m1)
	}
	if !(p.integral < 0) {
		t.Errorf("integral %v after a surplus", p.integral)
	}

	// Queue empty for long: the integral saturates at 1/ki and the output
	// at its ceiling.
	feed(p, at, 100000, 10*time.Millisecond, 10*time.Millisecond, 0)
	if p.integral != 1/cfg.Ki {
		t.Errorf("integral %v, want clamped at %v", p.integral, 1/cfg.Ki)
	}
	if p.multiplier != min(1+0.1*3+1, pacerMaxMultiplier) {
		t.Errorf("deficit: multiplier %v", p.multiplier)
	}

	// A stalled GPU lowers the rate estimate: after a second without a
	// start, the feed-forward is at most one partition per second.
	last := p.prevStarts
	stalled := p.lastEvent + time.Second
	p.control(stalled, 0, last)
	if !(p.rate <= pacerMaxMultiplier*1.01) {
		t.Errorf("stalled GPU: rate %.2f/s, want <= %v", p.rate, pacerMaxMultiplier)
	}
	if n := len(p.trace); n == 0 {
		t.Error("no trace")
	}
}

func TestPacerNeverStarvesAnEmptyPipe(t *testing.T) {
	cfg := PacerConfig{TargetDepth: 1, Kp: 0.1, Interval: time.Hour, MaxInFlight: 4}
	tr := NewTracker()
	p := newPacer(cfg, 1, tr)
	p.tokens = 0 // bootstrap spent, rate unknown
	if ok, _ := p.Ready(time.Second); !ok {
		t.Fatal("empty pipe: not admitted")
	}
	tr.inc(cPreGPU)
	ok, retry := p.Ready(time.Second)
	if ok {
		t.Error("admitted without a token while the pipe was not empty")
	}
	if retry != time.Second+cfg.Interval {
		t.Errorf("retry at %v, want one control period later", retry)
	}
}

func TestPacerCapsInFlight(t *testing.T) {
	cfg := PacerConfig{TargetDepth: 1, Kp: 0.1, Interval: time.Millisecond, MaxInFlight: 2}
	p := newPacer(cfg, 8, NewTracker())
	var holds [3]int64
	for i := range 2 {
		if ok, _ := p.Ready(0); !ok {
			t.Fatalf("admission %d refused with tokens left", i)
		}
		p.Admit(0, &holds[i])
	}
	if ok, retry := p.Ready(0); ok || retry != 0 {
		t.Fatalf("third admission: ok %v retry %v, want refused until an event", ok, retry)
	}
	p.On(0, EvTaken, &holds[0])
	p.On(0, EvEnded, &holds[0]) // returned once only
	if ok, _ := p.Ready(0); !ok {
		t.Fatal("slot not returned when the GPU took the partition")
	}
	if p.inFlight != 1 {
		t.Errorf("in flight %d, want 1", p.inFlight)
	}
}
