package export

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/provebench/provebench/results"
)

func testRun() *results.Run {
	sc := results.Scenario{Name: "hold", Strategy: "hold", Backend: "cpu"}
	for i, spp := range []float64{2, 1, 3, 9} {
		sc.Repetitions = append(sc.Repetitions, results.Repetition{
			Index: i + 1, Status: results.StatusOK, SecondsPerProof: spp, PeakRSSBytes: uint64(100 * (i + 1)),
		})
	}
	sc.Repetitions[3].Warmup = true // 9 s: not measured
	failed := results.Scenario{Name: "broken", Repetitions: []results.Repetition{{Index: 1, Status: results.StatusCrashed}}}
	return &results.Run{Scenarios: []results.Scenario{sc, failed}}
}

func TestGitHubActionBenchmark(t *testing.T) {
	var b bytes.Buffer
	if err := (githubAction{}).Export(&b, testRun()); err != nil {
		t.Fatal(err)
	}
	var got []gabEntry
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d entries, want 2 (time and memory of hold; nothing for the crashed one): %s", len(got), b.String())
	}
	if got[0].Name != "hold - seconds per proof" || got[0].Value != 2 || got[0].Unit != "s" || got[0].Range != "1 .. 3" {
		t.Errorf("time entry %+v", got[0])
	}
	if got[1].Name != "hold - peak RSS" || got[1].Value != 200 || got[1].Unit != "B" {
		t.Errorf("memory entry %+v", got[1])
	}
}

func TestBencher(t *testing.T) {
	var b bytes.Buffer
	if err := (bencher{}).Export(&b, testRun()); err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]bmfMetric
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("benchmarks %v, want hold only", got)
	}
	if l := got["hold"]["latency"]; l.Value != 2e9 || l.Lower != 1e9 || l.Upper != 3e9 {
		t.Errorf("latency %+v, want 2e9 [1e9, 3e9] ns", l)
	}
	if m := got["hold"]["peak-rss-bytes"]; m.Value != 200 || m.Lower != 100 || m.Upper != 300 {
		t.Errorf("peak-rss-bytes %+v", m)
	}
}

func TestByName(t *testing.T) {
	for _, e := range Exporters() {
		if got, err := ByName(e.Name()); err != nil || got.Name() != e.Name() {
			t.Errorf("ByName(%q) = %v, %v", e.Name(), got, err)
		}
	}
	if _, err := ByName("csv"); err == nil {
		t.Error("unknown format accepted")
	}
}
