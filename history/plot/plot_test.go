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
	ch := trend.Change{Key: s.Key, Index: 6, Commit: s.Points[6].Commit, Before: 100e6, After: 112e6, Percent: 12, PValue: 0.001}
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
	for _, want := range []string{`<img src="peak_rss_bytes.png"`, "ggggggg: 95.4 MiB → 107 MiB (&#43;12.0%, p 0.001)", "hold (cpu)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("history.html lacks %q", want)
		}
	}
}
