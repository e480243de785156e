package pipeline

import "time"

// releaseDef registers release: the permit comes back when synthesis
// ends, so nothing but the batch bounds the finished partitions waiting
// to send.
func releaseDef() StrategyDef {
	d := permitDef(Release, 0, false, "permit released after synthesis: finished partitions pile up on a full channel")
	d.Bound = func(Config, int64, int64) (int64, string, bool) { return 0, "", false }
	return d
}

// holdDef registers hold: the permit comes back when the channel has taken
// the partition, so the permits, the channel and the GPU side bound the
// live datasets.
func holdDef() StrategyDef {
	d := permitDef(Hold, 1, true, "permit held until the channel accepts")
	d.Bound = func(c Config, _, gpuSide int64) (int64, string, bool) {
		return int64(c.PartitionWorkers+c.ChannelCapacity) + gpuSide, "held permits + channel + GPU workers", true
	}
	return d
}

// permitDef is what release and hold share: the permits group, the gate
// (returning its permit at Sent for hold) and the check of pw.
func permitDef(name Strategy, colour int, hold bool, doc string) StrategyDef {
	return StrategyDef{
		Name: name, Group: "permits", Colour: colour, Doc: doc,
		New:      func(c Config, tr *Tracker, _, _ int64) Gate { return newPermitGate(tr, c.PartitionWorkers, hold) },
		Validate: validatePermits,
	}
}

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

// validatePermits checks pw for a strategy with a permit gate: at least 1.
func validatePermits(c Config, _, _ int64, errs *fieldErrors) {
	if c.PartitionWorkers < 1 {
		errs.add("pipeline.partition_workers", "%d is too few: the %s strategy needs at least 1 partition permit", c.PartitionWorkers, c.Strategy)
	}
}
