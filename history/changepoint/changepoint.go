package changepoint

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Options tunes Detect and DetectFamily. The zero value asks for the
// defaults.
type Options struct {
	// Alpha is the exponent of the distances, in (0, 2); 0 means 0.5.
	// Alpha below 2 makes the statistic sensitive to any change of
	// distribution, not the mean only; the smaller it is, the less one
	// far value weighs (on 30 values with a 12% step, 3% noise and two
	// 50% outliers, alpha 1 missed the step in 1 series of 40, 1.5 in 33,
	// 0.5 in none, with no false alarm on flat ones).
	Alpha float64
	// MinSize is the fewest values on either side of a split (at least 2,
	// for the within-side spread); 0 means 3.
	MinSize int
	// Permutations is the fewest draws a test makes before it calls a
	// split significant; 0 means 999. A family asks for more where its
	// smallest level needs them (see Draws).
	Permutations int
	// FDR is the false discovery rate the family is held to
	// (Benjamini-Hochberg); for a single series it is the significance
	// level. 0 means 0.01: a night of a history in which nothing changed
	// reports a change point with probability at most 1%, however many
	// series it holds.
	FDR float64
	// Seed seeds Detect's draws, so that a series gives the same answer
	// every time (DetectFamily takes a seed per series).
	Seed uint64

	// exhaustive draws every test to its end, as if its decision were
	// never certain sooner: the reference the early decisions are tested
	// against (same seeds, same change points).
	exhaustive bool
}

// Defaults.
const (
	DefaultAlpha        = 0.5
	DefaultMinSize      = 3
	DefaultPermutations = 999
	DefaultFDR          = 0.01
)

// exceedances is h of the sequential test (Besag and Clifford 1991): a
// test stops once h null draws reached the observed statistic, with
// p-value h/draws. Most flat series stop within a few dozen draws.
const exceedances = 10

// tieSlack makes a null draw whose statistic equals the observed one up
// to rounding count as reaching it (ties count against significance).
const tieSlack = 1e-9

func (o Options) withDefaults() (Options, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.MinSize == 0 {
		o.MinSize = DefaultMinSize
	}
	if o.Permutations == 0 {
		o.Permutations = DefaultPermutations
	}
	if o.FDR == 0 {
		o.FDR = DefaultFDR
	}
	switch {
	case !(o.Alpha > 0 && o.Alpha < 2):
		return o, fmt.Errorf("changepoint: alpha %g: want 0 < alpha < 2", o.Alpha)
	case o.MinSize < 2:
		return o, fmt.Errorf("changepoint: minimum segment %d: want at least 2", o.MinSize)
	case o.Permutations < 1:
		return o, fmt.Errorf("changepoint: %d permutations: want at least 1", o.Permutations)
	case !(o.FDR > 0 && o.FDR < 1):
		return o, fmt.Errorf("changepoint: false discovery rate %g: want 0 < q < 1", o.FDR)
	}
	return o, nil
}

// Test names the test that judged a change point.
type Test int

// Tests.
const (
	// Permutation is E-Divisive's energy statistic with its permutation
	// test: no assumption on the noise but exchangeable values.
	Permutation Test = iota + 1
	// Gaussian is the two-sample t statistic of the best split with its
	// null distribution under Gaussian noise: a series too short for its
	// permutations to give the evidence the family asks for.
	Gaussian
)

func (t Test) String() string {
	switch t {
	case Permutation:
		return "permutation"
	case Gaussian:
		return "gaussian"
	}
	return fmt.Sprintf("Test(%d)", int(t))
}

// ChangePoint is where a new regime starts.
type ChangePoint struct {
	// Index is the first value of the new regime.
	Index int
	// Q is the statistic of the split that found it: the energy
	// divergence (Permutation) or t² (Gaussian; +Inf for a step between
	// two noise-free regimes).
	Q float64
	// PValue is the test's p-value for that split, or, where the test
	// stopped drawing once it was certain to be below the level
	// (family.go), the largest it could have ended with.
	PValue float64
	// Test is the test that judged it.
	Test Test
}

// ErrNotFinite is returned for a series holding NaN or an infinity.
var ErrNotFinite = errors.New("changepoint: the series holds a value that is not finite")

// Series is one series of a family and the seed of its draws.
type Series struct {
	Values []float64
	Seed   uint64
}

// Result is what DetectFamily found.
type Result struct {
	// ChangePoints are each series' change points, in index order.
	ChangePoints [][]ChangePoint
	// Judged is the number of series long enough to split (two minimum
	// segments): the family the false discovery rate is controlled over.
	Judged int
	// Level is the largest p-value the family's change points may have:
	// FDR·k/Judged for the k series Benjamini-Hochberg kept; 0 when it
	// kept none.
	Level float64
	// Draws is the most draws a test made (Draws(Permutations, Judged, FDR)).
	Draws int
	// PermutationFrom is the length from which a series was judged by
	// permutations (PermutationFrom(MinSize, Judged, FDR)); shorter ones
	// were judged under the Gaussian null.
	PermutationFrom int
	// NullDraws is the number of null series drawn, all tests together:
	// the work the family cost.
	NullDraws int64
}

// Detect returns the change points of one series, in the order of their
// indices, at significance o.FDR. A series shorter than two minimum
// segments has none.
func Detect(ctx context.Context, values []float64, o Options) ([]ChangePoint, error) {
	r, err := DetectFamily(ctx, []Series{{Values: values, Seed: o.Seed}}, o)
	if err != nil {
		return nil, err
	}
	return r.ChangePoints[0], nil
}

// DetectFamily finds the change points of several series at once,
// holding the false discovery rate over them at o.FDR: each series' best
// split is tested, Benjamini-Hochberg keeps the series whose p-values pass
// the step-up bound, and within each kept series the search for further
// change points goes on at the level the family reached (Benjamini and
// Bogomolov's selective procedure). It returns ctx's error once ctx is
// done.
//
// Cost: each test draws only until its decision is certain (family.go),
// so a family of m series of n values costs O(m·n²/q) null draws' work
// where every series changed (each decided at the level q) and
// O(m·n² + n²·m/q) where one did: near-linear in m, where drawing every
// test to Draws would be O(m²·n²/q).
func DetectFamily(ctx context.Context, family []Series, opts Options) (Result, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Result{}, err
	}
	for i, s := range family {
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Result{}, fmt.Errorf("series %d: %w", i, ErrNotFinite)
			}
		}
	}
	res := Result{ChangePoints: make([][]ChangePoint, len(family))}
	for _, s := range family {
		if len(s.Values) >= 2*o.MinSize {
			res.Judged++
		}
	}
	if res.Judged == 0 {
		return res, nil
	}
	if err := CheckDraws(res.Judged, o.FDR); err != nil {
		return Result{}, err
	}
	res.Draws = Draws(o.Permutations, res.Judged, o.FDR)
	res.PermutationFrom = PermutationFrom(o.MinSize, res.Judged, o.FDR)
	searches := make([]*search, len(family))
	for i, s := range family {
		if len(s.Values) >= 2*o.MinSize {
			searches[i] = newSearch(s, o, res.Draws, len(s.Values) >= res.PermutationFrom)
			searches[i].exhaustive = opts.exhaustive
		}
	}
	f := &familyTest{ctx: ctx, q: o.FDR, m: res.Judged, searches: searches}
	firsts, err := f.firsts()
	if err != nil {
		return Result{}, err
	}
	k, err := f.decide(firsts)
	if err != nil || k == 0 {
		res.NullDraws = f.drawn()
		return res, err
	}
	res.Level = o.FDR * float64(k) / float64(res.Judged)
	for i, sr := range searches {
		if sr == nil || !firsts[i].ok || firsts[i].t.hi(sr.draws) > res.Level {
			continue
		}
		if res.ChangePoints[i], err = sr.within(ctx, firsts[i], res.Level); err != nil {
			return Result{}, err
		}
	}
	res.NullDraws = f.drawn()
	return res, nil
}

// benjaminiHochberg is the number of hypotheses the step-up procedure
// rejects at rate q: the largest k with p_(k) <= q·k/m.
func benjaminiHochberg(ps []float64, q float64) int {
	sorted := slices.Clone(ps)
	slices.Sort(sorted)
	m := float64(len(sorted))
	k := 0
	for i, p := range sorted {
		if p <= q*float64(i+1)/m {
			k = i + 1
		}
	}
	return k
}

// Draws is the most draws a test of a family of m series at rate q makes
// (at least min): 10m/q, so that a change whose true p-value is half the
// family's first bound (q/m), as PermutationFrom allows, is estimated
// below that bound in all but a few percent of families.
func Draws(min, m int, q float64) int {
	return max(min, int(math.Ceil(10*float64(m)/q)))
}

// MaxDraws bounds the draws one test may need: a family asks 10m/q
// (Draws), and one whose rate is too small for its size (--fdr 1e-300)
// would draw without end.
const MaxDraws = 10_000_000

// ErrFDRTooSmall is wrapped by CheckDraws' error.
var ErrFDRTooSmall = errors.New("changepoint: false discovery rate too small for the family")

// CheckDraws refuses a rate q for a family of m series whose tests would
// need more than MaxDraws draws each (10m/q): the smallest rate it can
// honour is 10m/MaxDraws.
func CheckDraws(m int, q float64) error {
	if need := 10 * float64(m) / q; need > MaxDraws {
		return fmt.Errorf("%w: %g over %d series asks %.3g draws a test, more than %d; the least it can honour is %g",
			ErrFDRTooSmall, q, m, need, MaxDraws, 10*float64(m)/MaxDraws)
	}
	return nil
}

// PermutationFrom is the length from which a series of a family of m at
// rate q is judged by permutations: the first n at which a change minSize
// values from an end, the values perfectly sorted on its two sides, has a
// permutation p-value (2/C(n, minSize): the sorted order and its mirror)
// of at most half the bound of the family's first discovery, q/(2m).
// Below it no ordering of the values alone is evidence enough, and the
// series is judged under a Gaussian null instead. For one series at
// q = 0.01 and minSize 3 it is 15; for 28 series, 42.
func PermutationFrom(minSize, m int, q float64) int {
	need := 4 * float64(m) / q
	n := 2 * minSize
	for binomial(n, minSize) < need {
		n++
	}
	return n
}

func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// candidate is a series' best split over its current segments and the
// test of its statistic; ok is false when no segment can be split.
type candidate struct {
	tau  int
	stat float64
	t    *seqTest
	ok   bool
}

// search is the hierarchical search of one series: the segments found so
// far and the test that judges the next split.
type search struct {
	stat   statistic
	test   Test
	bounds []int // segment boundaries, sorted
	rng    *rand.Rand
	draws  int
	found  []ChangePoint
	// exhaustive: see Options.exhaustive.
	exhaustive bool
	// made counts the null series drawn.
	made int64
}

// statistic is a test's statistic over the segments of a series.
type statistic interface {
	// observed is the series' best split over the segments between
	// bounds and its statistic; ok is false when none can be split.
	observed(bounds []int) (tau int, stat float64, ok bool)
	// null draws a series under the test's null hypothesis (no change
	// within any segment) and returns its best split's statistic.
	null(bounds []int, rng *rand.Rand) (stat float64, ok bool)
}

func newSearch(s Series, o Options, draws int, permutation bool) *search {
	sr := &search{
		bounds: []int{0, len(s.Values)},
		rng:    rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15)),
		draws:  draws,
	}
	if permutation {
		sr.stat, sr.test = newEnergy(s.Values, o.Alpha, o.MinSize), Permutation
	} else {
		sr.stat, sr.test = newStudent(s.Values, o.MinSize), Gaussian
	}
	return sr
}

// accept makes a candidate a change point: a new segment boundary.
func (s *search) accept(c candidate) {
	s.found = append(s.found, ChangePoint{Index: c.tau, Q: c.stat, PValue: c.t.hi(s.draws), Test: s.test})
	i, _ := slices.BinarySearch(s.bounds, c.tau)
	s.bounds = slices.Insert(s.bounds, i, c.tau)
	slices.SortFunc(s.found, func(a, b ChangePoint) int { return a.Index - b.Index })
}

// energy is E-Divisive's statistic, its null the series permuted within
// each segment.
type energy struct {
	d       [][]float64 // |vi − vj|^alpha
	idx     []int       // the permutation drawn: position -> value
	minSize int
	bounds  []int // the segments idx was last drawn within
}

func newEnergy(values []float64, alpha float64, minSize int) *energy {
	e := &energy{d: newMatrix(len(values)), idx: make([]int, len(values)), minSize: minSize}
	fill(e.d, values, alpha)
	for i := range e.idx {
		e.idx[i] = i
	}
	return e
}

func (e *energy) observed(bounds []int) (int, float64, bool) {
	id := make([]int, len(e.idx))
	for i := range id {
		id[i] = i
	}
	return bestOverSegments(e.d, id, bounds, e.minSize)
}

// null shuffles the values within each segment: the distances of the
// permuted series are the matrix read through the permutation, so no
// distance is computed again.
func (e *energy) null(bounds []int, rng *rand.Rand) (float64, bool) {
	if !slices.Equal(bounds, e.bounds) {
		// New segments: start again from the series' order, so that no
		// value leaves the segment it belongs to.
		for i := range e.idx {
			e.idx[i] = i
		}
		e.bounds = slices.Clone(bounds)
	}
	for s := 0; s+1 < len(bounds); s++ {
		seg := e.idx[bounds[s]:bounds[s+1]]
		rng.Shuffle(len(seg), func(i, j int) { seg[i], seg[j] = seg[j], seg[i] })
	}
	_, q, ok := bestOverSegments(e.d, e.idx, bounds, e.minSize)
	return q, ok
}

func newMatrix(n int) [][]float64 {
	d := make([][]float64, n)
	flat := make([]float64, n*n)
	for i := range d {
		d[i] = flat[i*n : (i+1)*n]
	}
	return d
}

// fill sets d to the distances of values.
func fill(d [][]float64, values []float64, alpha float64) {
	n := len(values)
	for i := range n {
		for j := i + 1; j < n; j++ {
			v := math.Abs(values[i] - values[j])
			if alpha != 1 {
				v = math.Pow(v, alpha)
			}
			d[i][j], d[j][i] = v, v
		}
	}
}

// bestOverSegments is the best split over every segment between bounds
// of the series whose position i holds value idx[i]: its index and
// statistic; ok is false when no segment can be split.
func bestOverSegments(d [][]float64, idx, bounds []int, minSize int) (tau int, q float64, ok bool) {
	for s := 0; s+1 < len(bounds); s++ {
		t, sq, sok := bestSplit(d, idx, bounds[s], bounds[s+1], minSize)
		if sok && (!ok || sq > q) {
			tau, q, ok = t, sq, true
		}
	}
	return tau, q, ok
}

// bestSplit scans the splits of the segment [a, b) with at least minSize
// values a side, keeping the three sums of distances (within the left
// side, within the right, between them) up to date as the split moves:
// O(n²) for the whole scan.
func bestSplit(d [][]float64, idx []int, a, b, minSize int) (tau int, q float64, ok bool) {
	if b-a < 2*minSize {
		return 0, 0, false
	}
	first := a + minSize
	var left, right, between float64
	for i := a; i < b; i++ {
		di := d[idx[i]]
		for j := i + 1; j < b; j++ {
			switch {
			case j < first:
				left += di[idx[j]]
			case i >= first:
				right += di[idx[j]]
			default:
				between += di[idx[j]]
			}
		}
	}
	for t := first; t <= b-minSize; t++ {
		if t > first {
			// Value t-1 moves from the right side to the left.
			dm := d[idx[t-1]]
			var toLeft, toRight float64
			for i := a; i < t-1; i++ {
				toLeft += dm[idx[i]]
			}
			for j := t; j < b; j++ {
				toRight += dm[idx[j]]
			}
			left += toLeft
			right -= toRight
			between += toRight - toLeft
		}
		stat := divergence(float64(t-a), float64(b-t), left, right, between)
		if !ok || stat > q {
			tau, q, ok = t, stat, true
		}
	}
	return tau, q, ok
}

// divergence is the scaled energy distance of two sides of sizes m and n
// from their sums of distances.
func divergence(m, n, left, right, between float64) float64 {
	e := 2*between/(m*n) - left/(m*(m-1)/2) - right/(n*(n-1)/2)
	return m * n / (m + n) * e
}

// student is the two-sample t statistic (squared, pooled variance) of the
// best split, its null Gaussian noise within each segment: the likelihood
// ratio test of a shift in the mean of normal values with unknown
// variance (Worsley 1979). t² does not change when a segment is shifted
// or scaled, so the null needs no estimate of either: standard normal
// draws are the null of every segment.
type student struct {
	values  []float64
	minSize int
	z       []float64 // a null draw
	y, s1   []float64 // scratch
	s2      []float64
}

func newStudent(values []float64, minSize int) *student {
	n := len(values)
	return &student{values: values, minSize: minSize, z: make([]float64, n), y: make([]float64, n),
		s1: make([]float64, n+1), s2: make([]float64, n+1)}
}

func (st *student) observed(bounds []int) (int, float64, bool) {
	return st.best(st.values, bounds)
}

func (st *student) null(bounds []int, rng *rand.Rand) (float64, bool) {
	for i := range st.z {
		st.z[i] = rng.NormFloat64()
	}
	_, q, ok := st.best(st.z, bounds)
	return q, ok
}

func (st *student) best(x []float64, bounds []int) (tau int, q float64, ok bool) {
	for s := 0; s+1 < len(bounds); s++ {
		t, sq, sok := st.bestSplit(x, bounds[s], bounds[s+1])
		if sok && (!ok || sq > q) {
			tau, q, ok = t, sq, true
		}
	}
	return tau, q, ok
}

// bestSplit is the split of x[a:b) with the largest t². The segment is
// first shifted by its first value and scaled by its range, so that equal
// values stay exactly equal (a noise-free side has a spread of exactly 0)
// and the running sums stay well conditioned. A constant segment has no
// change (t² 0); a step between two constant sides has t² +Inf.
func (st *student) bestSplit(x []float64, a, b int) (tau int, q float64, ok bool) {
	n := b - a
	if n < 2*st.minSize {
		return 0, 0, false
	}
	seg := x[a:b]
	lo, hi := slices.Min(seg), slices.Max(seg)
	if lo == hi {
		return a + st.minSize, 0, true
	}
	y, s1, s2 := st.y[:n], st.s1[:n+1], st.s2[:n+1]
	for i, v := range seg {
		y[i] = (v - seg[0]) / (hi - lo)
		s1[i+1] = s1[i] + y[i]
		s2[i+1] = s2[i] + y[i]*y[i]
	}
	for t := st.minSize; t <= n-st.minSize; t++ {
		m, k := float64(t), float64(n-t)
		sl, sr := s1[t], s1[n]-s1[t]
		ml, mr := sl/m, sr/k
		ss := max(0, s2[t]-sl*ml) + max(0, s2[n]-s2[t]-sr*mr)
		diff := mr - ml
		var stat float64
		switch pooled := ss / float64(n-2); {
		case pooled > 0:
			stat = diff * diff / (pooled * (1/m + 1/k))
		case diff != 0:
			stat = math.Inf(1)
		}
		if !ok || stat > q {
			tau, q, ok = a+t, stat, true
		}
	}
	return tau, q, ok
}
