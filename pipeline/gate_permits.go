package pipeline

import "time"

// permitGate is cuzk's partition semaphore: pw permits, one taken per
// partition before synthesis. Release gives it back when synthesis ends,
// hold when the channel has accepted the partition.
type permitGate struct {
	tr      *Tracker
	permits int64
	taken   int64
	// returnAt is the event that returns the permit: Synthesized (release)
	// or Sent (hold).
	returnAt Event
}

func newPermitGate(tr *Tracker, pw int, hold bool) *permitGate {
	g := &permitGate{tr: tr, permits: int64(pw), returnAt: EvSynthesized}
	if hold {
		g.returnAt = EvSent
	}
	return g
}

func (g *permitGate) Ready(time.Duration) (bool, time.Duration) {
	return g.taken < g.permits, 0
}

func (g *permitGate) Admit(_ time.Duration, hold *int64) {
	g.taken++
	*hold = 1
	g.tr.inc(cPermitsHeld)
}

func (g *permitGate) On(_ time.Duration, ev Event, hold *int64) {
	if *hold == 0 || (ev != g.returnAt && ev != EvEnded) {
		return
	}
	*hold = 0
	g.taken--
	g.tr.dec(cPermitsHeld)
}
