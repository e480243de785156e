package changepoint

import (
	"context"
	"math"
)

// Tests that stop once their decision is certain.
//
// A test draws null series until exceedances of them reach the observed
// statistic (p = exceedances/drawn) or Draws are drawn (p = (1 +
// reached)/(1 + Draws)): Besag and Clifford's sequential p-value. Drawing
// to the end is needed only where the answer could still fall on either
// side of the level the test is judged at: after l draws with r
// exceedances the p-value it would end with lies between
// (1+r)/(1+Draws) (no further exceedance) and the larger of
// exceedances/(l+exceedances−r) and exceedances/(1+Draws). A test stops
// as soon as that interval lies on one side of its level. Each series
// draws from its own seeded source in the same order whenever it stops,
// so the decisions, and the change points, are those of tests drawn to
// the end (Options.exhaustive, the reference the tests compare with).
//
// A family's level is not known before its p-values are (Benjamini-
// Hochberg's k), so the family is decided in rounds: every open test
// draws up to a cap, k is bounded from both sides by the intervals, the
// tests whose side of the level is still open draw on with the cap eight
// times larger, until k is known and every test is on its side of q·k/m.
// A family in which every series changed is decided at q (about
// exceedances/q draws a test); one change among m flat series needs its
// test drawn to about exceedances·m/q, the flat ones a few dozen each.

// firstRound is the first cap of the family's rounds: near
// exceedances/q for the default rate, where a family of changes is
// decided.
const firstRound = 1024

// roundGrowth is how much each round raises the cap.
const roundGrowth = 8

// ctxEvery is how many draws a test makes between looks at its context.
const ctxEvery = 1024

// seqTest is the sequential test of one observed statistic.
type seqTest struct {
	threshold      float64
	drawn, reached int
}

// final reports whether the test has ended: exceedances reached, or
// every one of max draws drawn.
func (t *seqTest) final(max int) bool { return t.reached >= exceedances || t.drawn >= max }

// lo is the least p-value the test can end with.
func (t *seqTest) lo(max int) float64 {
	if t.reached >= exceedances {
		return exceedances / float64(t.drawn)
	}
	return float64(1+t.reached) / float64(1+max)
}

// hi is the largest p-value the test can end with: its p-value once it
// has ended, an upper bound on it before.
func (t *seqTest) hi(max int) float64 {
	switch {
	case t.reached >= exceedances:
		return exceedances / float64(t.drawn)
	case t.drawn >= max:
		return float64(1+t.reached) / float64(1+max)
	}
	return math.Max(exceedances/float64(t.drawn+exceedances-t.reached), exceedances/float64(1+max))
}

// start is the best split over the current segments, its test not yet
// drawn.
func (s *search) start() candidate {
	tau, q, ok := s.stat.observed(s.bounds)
	if !ok {
		return candidate{t: &seqTest{reached: exceedances, drawn: exceedances}} // p = 1
	}
	threshold := q
	if !math.IsInf(q, 0) {
		threshold -= tieSlack * math.Abs(q)
	}
	return candidate{tau: tau, stat: q, t: &seqTest{threshold: threshold}, ok: true}
}

// drawTo draws t's null series until it ends or has drawn upto.
func (s *search) drawTo(ctx context.Context, t *seqTest, upto int) error {
	for t.drawn < upto && !t.final(s.draws) {
		if err := s.drawOne(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// drawOne draws one null series for t.
func (s *search) drawOne(ctx context.Context, t *seqTest) error {
	if s.made%ctxEvery == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	s.made++
	t.drawn++
	if nq, ok := s.stat.null(s.bounds, s.rng); ok && nq >= t.threshold {
		t.reached++
	}
	return nil
}

// decideAt draws t's null series until it ends or its p-value is certain
// to be at most level, or above it.
func (s *search) decideAt(ctx context.Context, t *seqTest, level float64) error {
	for !t.final(s.draws) {
		if !s.exhaustive && (t.hi(s.draws) <= level || t.lo(s.draws) > level) {
			return nil
		}
		if err := s.drawOne(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// within goes on from first, a change point at level, and returns the
// series' change points: each next best split is tested at level, and
// the first whose p-value is above it ends the search.
func (s *search) within(ctx context.Context, first candidate, level float64) ([]ChangePoint, error) {
	for c := first; c.ok; c = s.start() {
		if err := s.decideAt(ctx, c.t, level); err != nil {
			return nil, err
		}
		if c.t.hi(s.draws) > level {
			break
		}
		s.accept(c)
	}
	return s.found, nil
}

// familyTest decides the first tests of a family together.
type familyTest struct {
	ctx      context.Context
	q        float64
	m        int
	searches []*search // nil for a series too short to judge
}

// firsts is each judged series' best split, its test not yet drawn.
func (f *familyTest) firsts() ([]candidate, error) {
	out := make([]candidate, len(f.searches))
	for i, s := range f.searches {
		if s != nil {
			out[i] = s.start()
		}
	}
	return out, f.ctx.Err()
}

// decide draws the first tests in rounds until Benjamini-Hochberg's k is
// certain and every test is certainly on its side of q·k/m; it returns k.
func (f *familyTest) decide(c []candidate) (int, error) {
	open := f.judged(c, func(int) bool { return true })
	limit := 0
	for _, s := range f.searches {
		if s != nil {
			limit = s.draws
			if s.exhaustive {
				limit = 0 // the reference: draw each test to its end at once
			}
		}
	}
	upto := firstRound
	if limit == 0 {
		upto = math.MaxInt
	}
	for {
		for _, i := range open {
			if err := f.searches[i].drawTo(f.ctx, c[i].t, upto); err != nil {
				return 0, err
			}
		}
		kLo, kHi, undecided := f.bounds(c)
		if kLo == kHi && len(undecided) == 0 {
			return kLo, nil
		}
		open = undecided
		if len(open) == 0 {
			open = f.judged(c, func(i int) bool { return !c[i].t.final(f.searches[i].draws) })
		}
		upto = min(upto, math.MaxInt/roundGrowth) * roundGrowth
	}
}

// judged lists the judged series for which keep holds.
func (f *familyTest) judged(c []candidate, keep func(int) bool) []int {
	var out []int
	for i, s := range f.searches {
		if s != nil && keep(i) {
			out = append(out, i)
		}
	}
	return out
}

// bounds is Benjamini-Hochberg's k bounded from below (every test at its
// largest p-value) and above (at its least), and the tests not yet
// certain of their side of every level between.
func (f *familyTest) bounds(c []candidate) (kLo, kHi int, undecided []int) {
	var his, los []float64
	for i, s := range f.searches {
		if s != nil {
			his, los = append(his, c[i].t.hi(s.draws)), append(los, c[i].t.lo(s.draws))
		}
	}
	kLo, kHi = benjaminiHochberg(his, f.q), benjaminiHochberg(los, f.q)
	levelLo, levelHi := f.q*float64(kLo)/float64(f.m), f.q*float64(kHi)/float64(f.m)
	undecided = f.judged(c, func(i int) bool {
		t, max := c[i].t, f.searches[i].draws
		return !t.final(max) && t.lo(max) <= levelHi && t.hi(max) > levelLo
	})
	return kLo, kHi, undecided
}

// drawn is the null series drawn by every test of the family.
func (f *familyTest) drawn() int64 {
	var n int64
	for _, s := range f.searches {
		if s != nil {
			n += s.made
		}
	}
	return n
}
