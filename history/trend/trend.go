package trend

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/provebench/provebench/history/changepoint"
	"github.com/provebench/provebench/history/store"

	"github.com/provebench/provebench/internal/stats"
)

// Key names a series.
type Key struct {
	Backend       string
	Configuration string
	Metric        string
}

func (k Key) String() string { return fmt.Sprintf("%s %s (%s)", k.Configuration, k.Metric, k.Backend) }

// Point is one run's repetitions of a series' metric.
type Point struct {
	Commit string
	Time   time.Time
	Host   string
	Values []float64 // by repetition
	Median float64
	Min    float64
	Max    float64
}

// Series is a metric of one configuration across runs, oldest first.
type Series struct {
	Key
	Points []Point
}

// Medians are the points' medians, the series change points are sought in.
func (s *Series) Medians() []float64 {
	out := make([]float64, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.Median
	}
	return out
}

// FromRows groups rows (in store.Rows' order) into series, sorted by
// metric, configuration and backend.
func FromRows(rows []store.Row) []Series {
	var out []Series
	for _, r := range rows {
		k := Key{r.Backend, r.Configuration, r.Metric}
		if len(out) == 0 || out[len(out)-1].Key != k {
			out = append(out, Series{Key: k})
		}
		s := &out[len(out)-1]
		n := len(s.Points)
		if n == 0 || s.Points[n-1].Commit != r.Commit || !s.Points[n-1].Time.Equal(r.Time) || s.Points[n-1].Host != r.Host {
			s.Points = append(s.Points, Point{Commit: r.Commit, Time: r.Time, Host: r.Host})
			n++
		}
		s.Points[n-1].Values = append(s.Points[n-1].Values, r.Value)
	}
	for i := range out {
		for j := range out[i].Points {
			p := &out[i].Points[j]
			p.Median, p.Min, p.Max = stats.Median(p.Values), slices.Min(p.Values), slices.Max(p.Values)
		}
	}
	slices.SortStableFunc(out, func(a, b Series) int {
		if c := compareStrings(a.Metric, b.Metric); c != 0 {
			return c
		}
		if c := compareStrings(a.Configuration, b.Configuration); c != 0 {
			return c
		}
		return compareStrings(a.Backend, b.Backend)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Select keeps the series whose configuration matches re (nil: all).
func Select(series []Series, re *regexp.Regexp) []Series {
	if re == nil {
		return series
	}
	var out []Series
	for _, s := range series {
		if re.MatchString(s.Configuration) {
			out = append(out, s)
		}
	}
	return out
}

// Change is a change point of a series.
type Change struct {
	Key
	// Index is the first point of the new regime; Commit and Time are its
	// run's, PreviousCommit the run's before it.
	Index          int
	Commit         string
	Time           time.Time
	PreviousCommit string
	// Before and After are the medians of the points' medians from the
	// previous change point (or the start) to this one, and from this one
	// to the next (or the end).
	Before, After float64
	// Percent is the change of After from Before, in percent.
	Percent float64
	PValue  float64
	// Test is the test that judged it: permutations, or the Gaussian test
	// of a series too short for them.
	Test changepoint.Test
	// Regression is set when the metric moved in its worse direction.
	Regression bool
	// Runs is the number of points in the series.
	Runs int
}

// Options for Changes.
type Options struct {
	changepoint.Options
	// HigherIsBetter tells, by metric name, which metrics improve upwards.
	HigherIsBetter func(metric string) bool
	// Recent, when above 0, keeps only the change points among the last
	// Recent points of their series.
	Recent int
}

// Report is what Changes found in a family of series.
type Report struct {
	Changes []Change
	// Series is the number of series given; Judged the number long enough
	// to split (2·MinSize runs): the family the false discovery rate is
	// held over.
	Series, Judged int
	// Level is the largest p-value a change point may have in this
	// family (Benjamini-Hochberg's bound); 0 when none was found.
	Level float64
	// PermutationFrom is the number of runs from which a series is judged
	// by permutations; shorter ones by the Gaussian test.
	PermutationFrom int
}

// Changes finds the change points of the series, judged together: the
// false discovery rate is held at o.FDR over every series long enough to
// split, whatever Recent keeps.
func Changes(ctx context.Context, series []Series, o Options) (Report, error) {
	family := make([]changepoint.Series, len(series))
	for i := range series {
		med := series[i].Medians()
		for j, v := range med {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Report{}, fmt.Errorf("%s: run of commit %s: %w", series[i].Key, series[i].Points[j].Commit, changepoint.ErrNotFinite)
			}
		}
		family[i] = changepoint.Series{Values: med, Seed: o.Seed ^ seed(series[i].Key)}
	}
	res, err := changepoint.DetectFamily(ctx, family, o.Options)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Series: len(series), Judged: res.Judged, Level: res.Level, PermutationFrom: res.PermutationFrom}
	for i := range series {
		rep.Changes = append(rep.Changes, changes(&series[i], res.ChangePoints[i], o)...)
	}
	return rep, nil
}

// changes describes a series' change points.
func changes(s *Series, cps []changepoint.ChangePoint, o Options) []Change {
	var out []Change
	med := s.Medians()
	for j, cp := range cps {
		if o.Recent > 0 && len(med)-cp.Index > o.Recent {
			continue
		}
		lo, hi := 0, len(med)
		if j > 0 {
			lo = cps[j-1].Index
		}
		if j+1 < len(cps) {
			hi = cps[j+1].Index
		}
		c := Change{
			Key: s.Key, Index: cp.Index, Commit: s.Points[cp.Index].Commit, Time: s.Points[cp.Index].Time,
			PreviousCommit: s.Points[cp.Index-1].Commit,
			Before:         stats.Median(med[lo:cp.Index]), After: stats.Median(med[cp.Index:hi]),
			PValue: cp.PValue, Test: cp.Test, Runs: len(med),
		}
		if c.Before != 0 {
			c.Percent = 100 * (c.After - c.Before) / c.Before
		}
		higher := o.HigherIsBetter != nil && o.HigherIsBetter(s.Metric)
		c.Regression = (c.After > c.Before) != higher && c.After != c.Before
		out = append(out, c)
	}
	return out
}

// seed is the series' own seed, from its name: every series gets its own
// draws and the same ones on every call.
func seed(k Key) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, k.Backend, "\x00", k.Configuration, "\x00", k.Metric)
	return h.Sum64()
}
