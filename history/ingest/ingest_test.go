package ingest

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/history/store"
	"github.com/provebench/provebench/results"
)

const real = "../testdata/nightly-1.json.gz"

func readReal(t *testing.T) *results.Run {
	t.Helper()
	doc, err := results.Read(real)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestFromRun(t *testing.T) {
	doc := readReal(t)
	if _, err := FromRun(doc, real); err == nil {
		t.Fatal("a document without a git commit was read")
	}
	doc.Environment.GitCommit = "0123456789abcdef0123456789abcdef01234567"
	d, err := FromRun(doc, real)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != 1 {
		t.Fatalf("%d runs in a document run as one", len(d.Entries))
	}
	run := d.Entries[0].Run
	if run.Commit != doc.Environment.GitCommit || !run.Time.Equal(doc.StartedAt) || run.Host != doc.Environment.Hostname || run.Source != real {
		t.Errorf("run %+v", run)
	}
	// Every measured repetition, warm-ups left out, each metric it has.
	type key struct {
		config, metric string
		rep            int
	}
	got := map[key]float64{}
	for _, s := range d.Entries[0].Samples {
		if s.Backend != "cpu" {
			t.Errorf("backend %q", s.Backend)
		}
		got[key{s.Configuration, s.Metric, s.Repetition}] = s.Value
	}
	measured := 0
	for _, sc := range doc.Scenarios {
		for _, r := range sc.Repetitions {
			if !r.Measured() {
				continue
			}
			measured++
			if got[key{sc.Name, "peak_rss_bytes", r.Index}] != float64(r.PeakRSSBytes) ||
				got[key{sc.Name, "seconds_per_proof", r.Index}] != r.SecondsPerProof ||
				got[key{sc.Name, "cpu_seconds", r.Index}] != r.CPUUserSeconds+r.CPUSystemSeconds {
				t.Errorf("%s repetition %d: figures not taken", sc.Name, r.Index)
			}
			if _, ok := got[key{sc.Name, "peak_gpu_memory_bytes", r.Index}]; ok {
				t.Error("a GPU figure taken from a run without NVML")
			}
		}
	}
	if measured != 6 {
		t.Fatalf("%d measured repetitions in the fixture, want 6", measured)
	}
	doc.Simulated = &results.Simulation{Model: json.RawMessage(`{}`)}
	if _, err := FromRun(doc, real); err == nil {
		t.Error("a simulated document was read")
	}
}

func committed(t *testing.T) *results.Run {
	t.Helper()
	doc := readReal(t)
	doc.Environment.GitCommit = "0123456789abcdef0123456789abcdef01234567"
	return doc
}

// measured returns the indices (scenario, repetition) of the measured
// repetitions.
func measured(doc *results.Run) [][2]int {
	var out [][2]int
	for i, sc := range doc.Scenarios {
		for j, r := range sc.Repetitions {
			if r.Measured() {
				out = append(out, [2]int{i, j})
			}
		}
	}
	return out
}

// TestInsaneFigures is issue 32's item 9: a finite figure of 1.7e308 (or
// a negative one) is refused with the document, configuration,
// repetition and metric named.
func TestInsaneFigures(t *testing.T) {
	for name, edit := range map[string]func(r *results.Repetition){
		"seconds 1.7e308":    func(r *results.Repetition) { r.SecondsPerProof = 1.7e308 },
		"negative seconds":   func(r *results.Repetition) { r.WallSeconds = -1 },
		"peak RSS 2^63":      func(r *results.Repetition) { r.PeakRSSBytes = 1 << 63 },
		"throughput 1e300":   func(r *results.Repetition) { r.PartitionsPerSecond = 1e300 },
		"joules +Inf":        func(r *results.Repetition) { v := math.Inf(1); r.JoulesPerProof = &v },
		"device seconds 1e8": func(r *results.Repetition) { v := 1e8; r.DeviceSecondsPerPartition = &v },
	} {
		doc := committed(t)
		at := measured(doc)[4]
		sc := &doc.Scenarios[at[0]]
		edit(&sc.Repetitions[at[1]])
		_, err := FromRun(doc, "night.json.gz")
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for _, want := range []string{"night.json.gz", "configuration " + sc.Name, "outside [0, "} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v does not say %q", name, err, want)
			}
		}
	}
	// The bounds keep a sum of a year of nightly medians finite.
	for _, m := range Metrics() {
		if m.Max() <= 0 || math.IsInf(m.Max()*365*100, 0) {
			t.Errorf("%s: bound %g", m.Name, m.Max())
		}
	}
}

// TestDuplicateRepetition is issue 32's item 11: a repetition index twice
// among a configuration's measured repetitions is bad input, named.
func TestDuplicateRepetition(t *testing.T) {
	doc := committed(t)
	at := measured(doc)
	a, b := at[0], at[1]
	if a[0] != b[0] {
		t.Fatal("the fixture's first two measured repetitions are of different configurations")
	}
	doc.Scenarios[b[0]].Repetitions[b[1]].Index = doc.Scenarios[a[0]].Repetitions[a[1]].Index
	_, err := FromRun(doc, "night.json.gz")
	if err == nil || !strings.Contains(err.Error(), "night.json.gz") || !strings.Contains(err.Error(), "configuration "+doc.Scenarios[a[0]].Name) ||
		!strings.Contains(err.Error(), "repetition index 1 appears twice") {
		t.Errorf("a repetition index twice: %v", err)
	}
}

// TestStartTime is issue 32's item 12's second half: a document without
// started_at takes its earliest repetition's start, so two different such
// documents are two runs; one without any start is refused.
func TestStartTime(t *testing.T) {
	doc := committed(t)
	doc.StartedAt = time.Time{}
	d, err := FromRun(doc, real)
	if err != nil {
		t.Fatal(err)
	}
	first := doc.Scenarios[0].Repetitions[0].StartedAt
	if first.IsZero() || !d.Entries[0].Run.Time.Equal(first) {
		t.Errorf("start %v, want the first repetition's %v", d.Entries[0].Run.Time, first)
	}
	for i := range doc.Scenarios {
		for j := range doc.Scenarios[i].Repetitions {
			doc.Scenarios[i].Repetitions[j].StartedAt = time.Time{}
		}
	}
	if _, err := FromRun(doc, real); err == nil || !strings.Contains(err.Error(), "started_at") {
		t.Errorf("no start at all: %v", err)
	}
}

// TestMergedDocument: a merged document's runs are its shards', each
// with its own start and host, as the shards' own documents give them.
func TestMergedDocument(t *testing.T) {
	doc := committed(t)
	start2 := doc.StartedAt.Add(time.Minute)
	env2 := doc.Environment
	env2.Hostname = "second"
	doc.Shards = []results.ShardRun{
		{Index: 1, Count: 2, StartedAt: doc.StartedAt, Environment: doc.Environment},
		{Index: 2, Count: 2, StartedAt: start2, Environment: env2},
	}
	doc.Scenarios[0].Shard, doc.Scenarios[1].Shard = 1, 2
	d, err := FromRun(doc, "merged.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Run{
		{Commit: doc.Environment.GitCommit, Time: doc.StartedAt, Host: doc.Environment.Hostname},
		{Commit: doc.Environment.GitCommit, Time: start2, Host: "second"},
	}
	if len(d.Entries) != 2 {
		t.Fatalf("%d runs, want 2", len(d.Entries))
	}
	for i, e := range d.Entries {
		if e.Run.Commit != want[i].Commit || !e.Run.Time.Equal(want[i].Time) || e.Run.Host != want[i].Host || len(e.Samples) == 0 {
			t.Errorf("run %d: %+v (%d samples), want %+v", i, e.Run, len(e.Samples), want[i])
		}
		for _, s := range e.Samples {
			if s.Configuration != doc.Scenarios[i].Name {
				t.Errorf("run %d holds %s's samples", i, s.Configuration)
			}
		}
	}
}

// TestSane: stored values beyond their bounds (a history from before add
// checked them) are set apart, the others kept.
func TestSane(t *testing.T) {
	rows := []store.Row{
		{Sample: store.Sample{Metric: "peak_rss_bytes", Value: 3e7}},
		{Sample: store.Sample{Metric: "peak_rss_bytes", Value: 1.7e308}},
		{Sample: store.Sample{Metric: "seconds_per_proof", Value: 2}},
	}
	kept, outside := Sane(rows)
	if len(kept) != 2 || len(outside) != 1 || outside[0].Value != 1.7e308 || outside[0].Err == nil {
		t.Errorf("kept %v, outside %v", kept, outside)
	}
}
