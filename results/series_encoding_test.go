package results

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestDeltaSeriesKeepsTheFigures: a real schema-1 document written as
// schema 2 and read back has every series value as before, times to the
// microsecond.
func TestDeltaSeriesKeepsTheFigures(t *testing.T) {
	r, _ := readReal(t)
	data, err := Encode(r, FormatGzip)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode("v2", data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Schema != SchemaVersion {
		t.Fatalf("schema %d", back.Schema)
	}
	n := 0
	for i, sc := range r.Scenarios {
		for j, rep := range sc.Repetitions {
			a, b := rep.Series, back.Scenarios[i].Repetitions[j].Series
			if a == nil {
				continue
			}
			n++
			if !reflect.DeepEqual(a.RSSBytes, b.RSSBytes) || !reflect.DeepEqual(a.Counters, b.Counters) || a.IntervalSeconds != b.IntervalSeconds {
				t.Fatalf("%s repetition %d: columns changed", sc.Name, rep.Index)
			}
			if len(a.T) == 0 || len(b.T) != len(a.T) {
				t.Fatalf("%s repetition %d: %d times became %d", sc.Name, rep.Index, len(a.T), len(b.T))
			}
			for k := range a.T {
				if !(math.Abs(a.T[k]-b.T[k]) <= 0.5e-6+1e-12) { // NaN fails too
					t.Fatalf("%s repetition %d: t[%d] %v became %v", sc.Name, rep.Index, k, a.T[k], b.T[k])
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no series in the fixture")
	}
}

// TestDeltaFallsBackToValues: what a delta cannot hold exactly is written
// as values, in the same document, and reads back unchanged.
func TestDeltaFallsBackToValues(t *testing.T) {
	big := uint64(math.MaxUint64)
	s := Series{
		IntervalSeconds: 0.01,
		T:               []float64{0, 0.01, 1e12}, // past 2^50 µs
		RSSBytes:        []uint64{1, big},
		GPUMemoryBytes:  []*uint64{&big, nil},
		Counters:        map[string][]int64{"jump": {math.MinInt64, math.MaxInt64}, "plain": {1, 2, 2}},
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"t":[`, `"rss_bytes":[`, `"gpu_memory_bytes":[`, `"counters":{"jump"`, `"counters_delta":{"plain":[1,1,0]}`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %s", data, want)
		}
	}
	var back Series
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("read back %+v\nwant %+v", back, s)
	}
}

func TestDeltaSeriesRefused(t *testing.T) {
	for name, doc := range map[string]string{
		"both forms":        `{"interval_seconds":0,"t":[0],"t_delta_us":[0]}`,
		"counter twice":     `{"interval_seconds":0,"counters":{"a":[1]},"counters_delta":{"a":[1]}}`,
		"negative size":     `{"interval_seconds":0,"rss_bytes_delta":[5,-6]}`,
		"overflow":          `{"interval_seconds":0,"counters_delta":{"a":[9223372036854775807,1]}}`,
		"time out of range": `{"interval_seconds":0,"t_delta_us":[1125899906842624,1]}`,
		"unknown column":    `{"interval_seconds":0,"vram_delta":[1]}`,
	} {
		var s Series
		if err := json.Unmarshal([]byte(doc), &s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
