package pipeline

import "time"

// budgetGate is cuzk's byte budget: admission reserves a partition's
// a/b/c and wire bytes; the a/b/c share comes back when a/b/c are freed
// (early, at the end of the NTT region, or at dealloc), the wires' share at
// dealloc. Live dataset bytes never exceed the budget.
type budgetGate struct {
	tr         *Tracker
	budget     int64
	reserved   int64
	abc, wires int64 // what one partition reserves
}

func newBudgetGate(tr *Tracker, budget, abc, wires int64) *budgetGate {
	return &budgetGate{tr: tr, budget: budget, abc: abc, wires: wires}
}

func (g *budgetGate) Ready(time.Duration) (bool, time.Duration) {
	return g.reserved+g.abc+g.wires <= g.budget, 0
}

func (g *budgetGate) Admit(_ time.Duration, hold *int64) {
	n := g.abc + g.wires
	g.reserved += n
	*hold = n
	g.tr.add(cBudgetReserved, n)
}

// On returns the a/b/c share at ABCFreed (what is held beyond the wires'
// share) and everything at Deallocated and Done.
func (g *budgetGate) On(_ time.Duration, ev Event, hold *int64) {
	var n int64
	switch ev {
	case EvABCFreed:
		n = max(*hold-g.wires, 0)
	case EvDeallocated, EvEnded:
		n = *hold
	}
	if n == 0 {
		return
	}
	*hold -= n
	g.reserved -= n
	g.tr.add(cBudgetReserved, -n)
}
