package reports

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/provebench/provebench/results"
)

// longSeries is n samples 10 ms apart of a run whose RSS climbs to one
// spike, at spikeAt, and whose waiting_send counter jumps to 7 for one
// sample elsewhere: peaks a thinned series must keep.
func longSeries(n, spikeAt int) *results.Series {
	s := &results.Series{IntervalSeconds: 0.01, Counters: map[string][]int64{"waiting_send": make([]int64, n), "in_channel": make([]int64, n)}}
	for i := range n {
		s.T = append(s.T, float64(i)*0.01)
		rss := uint64(100<<20 + (i%97)<<10)
		if i == spikeAt {
			rss = 900 << 20
		}
		s.RSSBytes = append(s.RSSBytes, rss)
		s.Counters["in_channel"][i] = int64(i % 2)
	}
	s.Counters["waiting_send"][n/3+1] = 7
	return s
}

func TestThinSeriesKeepsPeaks(t *testing.T) {
	const n = 200_000
	s := longSeries(n, 123_457)
	th := thinSeries(s, plotBuckets)
	if len(th.T) > 4*plotBuckets || len(th.T) < plotBuckets {
		t.Fatalf("%d samples thinned to %d, want at most %d", n, len(th.T), 4*plotBuckets)
	}
	if th.T[0] != s.T[0] || th.T[len(th.T)-1] != s.T[n-1] {
		t.Errorf("time range %v..%v, want %v..%v", th.T[0], th.T[len(th.T)-1], s.T[0], s.T[n-1])
	}
	if maxOf(ints64(th.Counters["waiting_send"])) != 7 || slicesMax(th.RSSBytes) != 900<<20 {
		t.Errorf("a peak was lost: waiting_send %v, RSS %d", maxOf(ints64(th.Counters["waiting_send"])), slicesMax(th.RSSBytes))
	}
	for i := 1; i < len(th.T); i++ {
		if th.T[i] <= th.T[i-1] {
			t.Fatalf("thinned times out of order at %d", i)
		}
	}
	for name, col := range th.Counters {
		if len(col) != len(th.T) {
			t.Errorf("%s: %d values for %d times", name, len(col), len(th.T))
		}
	}
	short := longSeries(100, 5)
	if thinSeries(short, plotBuckets) != short {
		t.Error("a short series was copied")
	}
}

// Issue 20, item 7: a report of a long run draws bounded timelines, in
// bounded memory: the plots of a 300,000-sample repetition are no larger
// than a minute's.
func TestReportOfLongRunIsBounded(t *testing.T) {
	run := fixtureRun(t, false, fixtureShapes[:1])
	sc := &run.Scenarios[0]
	for i := range sc.Repetitions {
		sc.Repetitions[i].Series = longSeries(300_000, 1000)
	}
	dir := t.TempDir()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	files, err := Generate(run, dir, Options{Formats: []string{"svg"}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 600<<20 {
		t.Errorf("the report allocated %d MiB", alloc>>20)
	}
	if len(files) == 0 {
		t.Fatal("the report wrote no file")
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() > 4<<20 {
			t.Errorf("%s: %d bytes (%v)", filepath.Base(f), st.Size(), err)
		}
	}
}

// An interrupted report writes nothing and says why.
func TestGenerateStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := GenerateContext(ctx, fixtureRun(t, false, fixtureShapes), dir, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("an interrupted report wrote %d files", len(entries))
	}
}

func ints64(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func slicesMax(v []uint64) uint64 {
	var m uint64
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
