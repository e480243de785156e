package plot

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/history/trend"
)

func TestWrite(t *testing.T) {
	s := trend.Series{Key: trend.Key{Backend: "cpu", Configuration: "hold", Metric: "peak_rss_bytes"}}
	for i := range 12 {
		v := 100e6
		if i >= 6 {
			v = 112e6
		}
		s.Points = append(s.Points, trend.Point{Commit: strings.Repeat(string(rune('a'+i)), 40), Time: time.Unix(int64(i)*86400, 0),
			Values: []float64{v * 0.99, v, v * 1.01}, Median: v, Min: v * 0.99, Max: v * 1.01})
	}
	ch := trend.Change{Key: s.Key, Index: 6, Commit: s.Points[6].Commit, Time: s.Points[6].Time, Before: 100e6, After: 112e6, Percent: 12, PValue: 0.001}
	dir := t.TempDir()
	files, err := Write(dir, "test history", []Figure{{Metric: "peak_rss_bytes", Unit: "B", Series: []trend.Series{s}, Changes: map[trend.Key][]trend.Change{s.Key: {ch}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != "peak_rss_bytes.png" || filepath.Base(files[1]) != HTMLFile {
		t.Fatalf("files %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	page, _ := os.ReadFile(files[1])
	for _, want := range []string{`<img src="peak_rss_bytes.png"`, "1970-01-07 00:00 ggggggg: 95.4 MiB → 107 MiB (&#43;12.0%, p 0.001)", "hold (cpu)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("history.html lacks %q", want)
		}
	}
}

// Issue 41, item 4: one panel per configuration (small multiples) on a
// time axis: three series draw three panels (a taller picture than one),
// and two runs 20 minutes apart sit 20 minutes apart, not one index.
func TestSmallMultiplesOnATimeAxis(t *testing.T) {
	start := time.Date(2026, 12, 4, 2, 0, 0, 0, time.UTC)
	series := func(name string, offsets ...time.Duration) trend.Series {
		s := trend.Series{Key: trend.Key{Backend: "cpu", Configuration: name, Metric: "wall_seconds"}}
		for i, d := range offsets {
			v := 1 + 0.01*float64(i)
			s.Points = append(s.Points, trend.Point{Commit: "c", Time: start.Add(d), Values: []float64{v}, Median: v, Min: v, Max: v})
		}
		return s
	}
	height := func(ss ...trend.Series) int {
		data, err := render(Figure{Metric: "wall_seconds", Unit: "s", Series: ss})
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return img.Bounds().Dy()
	}
	a := series("a", 0, 20*time.Minute, 24*time.Hour)
	one, three := height(a), height(a, series("b", 0, time.Hour), series("c", 0, 2*time.Hour))
	if three < 2*one {
		t.Errorf("three configurations draw %d px, one %d: want a panel each", three, one)
	}
	lo, hi := timeRange([]trend.Series{a})
	if lo > unixSeconds(start) || hi < unixSeconds(start.Add(24*time.Hour)) || hi-lo > 2*86400 {
		t.Errorf("the time axis %v..%v does not span the runs' starts", lo, hi)
	}
}
