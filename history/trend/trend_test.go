package trend

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"testing"
	"time"

	"github.com/provebench/provebench/history/store"

	"github.com/provebench/provebench/internal/stats"
)

// rows makes a history of one configuration: nights runs of a metric with
// reps repetitions each, value(night, rep).
func rows(config, metric string, nights, reps int, value func(n, r int) float64) []store.Row {
	var out []store.Row
	for n := range nights {
		for r := 1; r <= reps; r++ {
			out = append(out, store.Row{
				Run:    store.Run{Commit: fmt.Sprintf("c%02d", n), Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n), Host: "h"},
				Sample: store.Sample{Backend: "cpu", Configuration: config, Metric: metric, Repetition: r, Value: value(n, r)},
			})
		}
	}
	return out
}

func TestFromRows(t *testing.T) {
	in := append(rows("b", "m", 3, 3, func(n, r int) float64 { return float64(10*n + r) }),
		rows("a", "m", 2, 2, func(n, r int) float64 { return float64(r) })...)
	series := FromRows(in)
	if len(series) != 2 || series[0].Configuration != "a" || series[1].Configuration != "b" {
		t.Fatalf("series %+v", series)
	}
	b := series[1]
	if len(b.Points) != 3 || b.Points[2].Commit != "c02" || b.Points[2].Median != 22 || b.Points[2].Min != 21 || b.Points[2].Max != 23 {
		t.Fatalf("points %+v", b.Points)
	}
	if got := Select(series, regexp.MustCompile("^b$")); len(got) != 1 || got[0].Configuration != "b" {
		t.Fatalf("select: %+v", got)
	}
	if stats.Median([]float64{4, 1, 3, 2}) != 2.5 || stats.Median([]float64{3, 1, 2}) != 2 {
		t.Error("Median")
	}
}

func TestChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	noise := func() float64 { return 1 + 0.02*rng.NormFloat64() }
	// Time goes up 10% at night 20 (a regression); throughput down 10%
	// (a regression, higher is better); memory down 10% (an improvement).
	in := rows("x", "seconds_per_proof", 30, 3, func(n, _ int) float64 {
		if n >= 20 {
			return 1.1 * noise()
		}
		return noise()
	})
	in = append(in, rows("x", "partitions_per_second", 30, 3, func(n, _ int) float64 {
		if n >= 20 {
			return 90 * noise()
		}
		return 100 * noise()
	})...)
	in = append(in, rows("x", "peak_rss_bytes", 30, 3, func(n, _ int) float64 {
		if n >= 20 {
			return 0.9e9 * noise()
		}
		return 1e9 * noise()
	})...)
	higher := func(m string) bool { return m == "partitions_per_second" }
	rep, err := Changes(context.Background(), FromRows(in), Options{HigherIsBetter: higher})
	if err != nil {
		t.Fatal(err)
	}
	changes := rep.Changes
	if rep.Series != 3 || rep.Judged != 3 || rep.Level <= 0 {
		t.Errorf("report %+v: want 3 series judged, a level", rep)
	}
	want := map[string]bool{"seconds_per_proof": true, "partitions_per_second": true, "peak_rss_bytes": false}
	if len(changes) != 3 {
		t.Fatalf("changes %+v, want one per metric", changes)
	}
	for _, c := range changes {
		if c.Index != 20 || c.Commit != "c20" || c.PreviousCommit != "c19" || c.Runs != 30 {
			t.Errorf("%s: change at %d (%s after %s) of %d", c.Metric, c.Index, c.Commit, c.PreviousCommit, c.Runs)
		}
		if c.Regression != want[c.Metric] {
			t.Errorf("%s: regression %v, want %v", c.Metric, c.Regression, want[c.Metric])
		}
		if p := math.Abs(c.Percent); !(p >= 7 && p <= 13) { // NaN fails too
			t.Errorf("%s: %g -> %g (%+.1f%%), want about ±10%%", c.Metric, c.Before, c.After, p)
		}
	}
	// Recent: a change 10 runs back is not among the last 5.
	recent, err := Changes(context.Background(), FromRows(in), Options{HigherIsBetter: higher, Recent: 5})
	if err != nil || len(recent.Changes) != 0 || recent.Judged != 3 {
		t.Errorf("--recent 5: %+v, %v", recent, err)
	}
	recent, err = Changes(context.Background(), FromRows(in), Options{HigherIsBetter: higher, Recent: 10})
	if err != nil || len(recent.Changes) != 3 {
		t.Errorf("--recent 10: %+v, %v", recent, err)
	}
}

// TestFlatSweep is issue 32's item 6 on series as the history holds them:
// 50 flat configurations × 30 nights of four timed metrics and peak RSS
// (3 repetitions a night, 3% noise; seconds per proof, wall time and
// throughput move together, as in a real run) gave 8 change points when
// each series was tested alone at p <= 0.01. Judged as one family at
// q = 0.01 there is none; a 10% step in one configuration's peak RSS
// among them is found, and nothing else.
func TestFlatSweep(t *testing.T) {
	sweep := func(stepConfig int) []store.Row {
		rng := rand.New(rand.NewPCG(1, 6))
		var in []store.Row
		for c := range 50 {
			name := fmt.Sprintf("cfg%02d", c)
			night := make([]float64, 30) // a night's load, shared by its timed figures
			for n := range night {
				night[n] = 1 + 0.03*rng.NormFloat64()
			}
			timed := func(metric string, level float64, inverse bool) {
				in = append(in, rows(name, metric, 30, 3, func(n, _ int) float64 {
					v := level * night[n] * (1 + 0.005*rng.NormFloat64())
					if inverse {
						return level * level / v
					}
					return v
				})...)
			}
			timed("seconds_per_proof", 2, false)
			timed("wall_seconds", 8, false)
			timed("partitions_per_second", 4, true)
			timed("cpu_seconds", 15, false)
			in = append(in, rows(name, "peak_rss_bytes", 30, 3, func(n, _ int) float64 {
				v := 300e6 * (1 + 0.003*rng.NormFloat64())
				if c == stepConfig && n >= 20 {
					v *= 1.1
				}
				return v
			})...)
		}
		return in
	}
	higher := func(m string) bool { return m == "partitions_per_second" }
	flat, err := Changes(context.Background(), FromRows(sweep(-1)), Options{HigherIsBetter: higher})
	if err != nil {
		t.Fatal(err)
	}
	if flat.Judged != 250 {
		t.Fatalf("%d series judged, want 250", flat.Judged)
	}
	if len(flat.Changes) != 0 {
		t.Errorf("a flat sweep: %d change points: %+v", len(flat.Changes), flat.Changes[0])
	}
	alone := 0
	for _, s := range FromRows(sweep(-1)) {
		rep, err := Changes(context.Background(), []Series{s}, Options{HigherIsBetter: higher})
		if err != nil {
			t.Fatal(err)
		}
		alone += len(rep.Changes)
	}
	t.Logf("a flat sweep of 250 series: %d change points judged as a family, %d judged one by one", len(flat.Changes), alone)
	if alone == 0 {
		t.Error("no flat series judged alone had a change point: this sweep does not show what the family corrects")
	}
	step, err := Changes(context.Background(), FromRows(sweep(7)), Options{HigherIsBetter: higher})
	if err != nil {
		t.Fatal(err)
	}
	if len(step.Changes) != 1 || step.Changes[0].Configuration != "cfg07" || step.Changes[0].Metric != "peak_rss_bytes" ||
		step.Changes[0].Index != 20 || !step.Changes[0].Regression {
		t.Errorf("a 10%% step in cfg07's peak RSS at night 21: %+v", step.Changes)
	}
}
