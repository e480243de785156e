package pipeline

import (
	"math"
	"time"
)

// Pacer constants that are not configuration: they shape the estimate of
// the GPU's rate and bound the controller's output (see the package
// documentation).
const (
	// pacerRateSmoothing is the weight of a new GPU inter-start interval
	// in its moving average.
	pacerRateSmoothing = 0.2
	// pacerMinMultiplier and pacerMaxMultiplier clamp the admission rate
	// to [0.1, 5] times the GPU's rate.
	pacerMinMultiplier = 0.1
	pacerMaxMultiplier = 5.0
	// pacerBurst is the token bucket's depth: tokens that accrue while the
	// dispatcher is late (timer slack) are kept, but an admission stall
	// elsewhere cannot bank more than two.
	pacerBurst = 2.0
)

// PacerSample is the controller's state after one control period.
type PacerSample struct {
	// T is the offset from the run's start.
	T time.Duration `json:"t"`
	// Depth is the queue depth the controller saw.
	Depth int64 `json:"depth"`
	// GPUInterval is the estimated time between GPU starts (0 until the
	// first one).
	GPUInterval time.Duration `json:"gpu_interval"`
	// Integral is the accumulated error, in partitions x GPU intervals.
	Integral float64 `json:"integral"`
	// Multiplier is the admission rate over the GPU's rate.
	Multiplier float64 `json:"multiplier"`
	// Rate is the admission rate in partitions per second.
	Rate float64 `json:"rate"`
}

// pacer is the pacer gate: it admits partitions at a rate set by a PI
// controller on the GPU queue depth, with the GPU's measured rate as
// feed-forward, and caps the partitions admitted and not yet taken by a GPU
// worker at MaxInFlight. Times are offsets from the run's start.
type pacer struct {
	cfg PacerConfig
	tr  *Tracker

	// inFlight counts partitions admitted and not yet taken by a GPU
	// worker.
	inFlight int64

	// Token bucket: Admit takes one token; tokens accrue at rate per
	// second up to pacerBurst, except for the bootstrap grant.
	tokens     float64
	rate       float64
	lastRefill time.Duration

	// GPU rate estimate: moving average of the interval between Start
	// completions (seconds), known after the second one; seen is false
	// until the first.
	interval   float64
	known      bool
	prevStarts int64
	lastEvent  time.Duration
	seen       bool

	integral   float64
	multiplier float64
	lastTick   time.Duration
	trace      []PacerSample
}

// newPacer makes a pacer whose bootstrap grant fills the synthesis workers
// and the target queue before the GPU's rate is known.
func newPacer(cfg PacerConfig, synthWorkers int, tr *Tracker) *pacer {
	return &pacer{
		cfg:        cfg,
		tr:         tr,
		tokens:     float64(synthWorkers) + math.Ceil(cfg.TargetDepth),
		multiplier: 1,
	}
}

// Ready admits when a token is there, or whenever nothing admitted is on
// its way to the GPU: whatever the controller says, an empty pipe only
// starves the GPU (and, before the rate is known, would never fill again).
func (p *pacer) Ready(now time.Duration) (bool, time.Duration) {
	if p.inFlight >= int64(p.cfg.MaxInFlight) {
		return false, 0
	}
	p.refill(now)
	if p.tokens >= 1 || p.tr.load(cPreGPU) == 0 {
		return true, 0
	}
	wait := p.cfg.Interval
	if p.rate > 0 {
		need := time.Duration((1 - p.tokens) / p.rate * float64(time.Second))
		wait = min(max(need, time.Microsecond), wait)
	}
	return false, now + wait
}

func (p *pacer) Admit(now time.Duration, hold *int64) {
	p.refill(now)
	if p.tokens >= 1 {
		p.tokens--
	}
	p.inFlight++
	*hold = 1
}

// On returns the in-flight slot when a GPU worker takes the partition (or
// it ends before).
func (p *pacer) On(_ time.Duration, ev Event, hold *int64) {
	if *hold == 1 && (ev == EvTaken || ev == EvEnded) {
		*hold = 0
		p.inFlight--
	}
}

// refill adds the tokens accrued since the last refill at the current rate,
// up to pacerBurst.
func (p *pacer) refill(now time.Duration) {
	if p.rate > 0 && p.tokens < pacerBurst {
		p.tokens = min(pacerBurst, p.tokens+p.rate*(now-p.lastRefill).Seconds())
	}
	p.lastRefill = now
}

func (p *pacer) period() time.Duration { return p.cfg.Interval }

// tick runs one control period on the tracker's queue depth and GPU starts.
func (p *pacer) tick(now time.Duration) {
	p.control(now, p.tr.load(cQueueDepth), p.tr.load(cGPUStarts))
}

// control updates the GPU rate estimate from the Start completions seen so
// far, integrates the depth error and sets the admission rate.
func (p *pacer) control(now time.Duration, depth, starts int64) {
	p.refill(now) // tokens accrued so far count at the old rate

	if n := starts - p.prevStarts; n > 0 {
		// The first completions only start the clock: when their Starts
		// began is unknown, and the time since the run began would count
		// the first synthesis as GPU time.
		if p.seen {
			iv := (now - p.lastEvent).Seconds() / float64(n)
			if p.known {
				p.interval += pacerRateSmoothing * (iv - p.interval)
			} else {
				p.interval, p.known = iv, true
			}
		}
		p.prevStarts, p.lastEvent, p.seen = starts, now, true
	}
	dt := (now - p.lastTick).Seconds()
	p.lastTick = now

	s := PacerSample{T: now, Depth: depth, Multiplier: 1}
	if p.known && p.interval > 0 {
		// A stalled GPU lowers the estimate: the interval is at least the
		// time since the last start.
		iv := max(p.interval, (now - p.lastEvent).Seconds())
		gpuRate := 1 / iv
		e := p.cfg.TargetDepth - float64(depth)
		p.integral += e * dt * gpuRate
		if p.cfg.Ki > 0 {
			// Anti-windup: the integral term alone never exceeds one
			// GPU rate.
			lim := 1 / p.cfg.Ki
			p.integral = min(max(p.integral, -lim), lim)
		}
		p.multiplier = min(max(1+p.cfg.Kp*e+p.cfg.Ki*p.integral, pacerMinMultiplier), pacerMaxMultiplier)
		p.rate = p.multiplier * gpuRate
		s.GPUInterval = time.Duration(iv * float64(time.Second))
		s.Integral, s.Multiplier, s.Rate = p.integral, p.multiplier, p.rate
	}
	p.trace = append(p.trace, s)
}
