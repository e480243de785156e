package main

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/history/ingest"
	"github.com/provebench/provebench/history/store"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/shard"
)

// nightlyDocs are real CPU runs of history/testdata/nightly.yaml (see
// history/testdata/README.md): 2 configurations, 3 measured repetitions
// each, on a shared 2-core VM.
var nightlyDocs = []string{
	"../../history/testdata/nightly-1.json.gz",
	"../../history/testdata/nightly-2.json.gz",
	"../../history/testdata/nightly-3.json.gz",
	"../../history/testdata/nightly-4.json.gz",
}

// nightCommit is the synthetic commit of night n.
func nightCommit(n int) string {
	h := sha1.Sum([]byte(fmt.Sprintf("night %d", n)))
	return hex.EncodeToString(h[:])
}

// writeNights is the test helper that makes a nightly history from real
// documents: night n (1..nights) is the real run nightlyDocs[(n-1) % 4],
// re-stamped as if built from nightCommit(n) and started at 02:00 UTC on
// 2026-11-n (1 November plus n-1 days); from night stepFrom on, every
// repetition's peak RSS (peak_rss_bytes, the kernel's figure) is
// multiplied by 1+step: an injected step, the only change in the history.
// Every other figure, timed ones included, is the real run's. It returns
// the documents' paths, in night order.
func writeNights(t *testing.T, dir string, nights, stepFrom int, step float64) []string {
	t.Helper()
	var docs []*results.Run
	for _, p := range nightlyDocs {
		d, err := results.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	var paths []string
	for n := 1; n <= nights; n++ {
		// A fresh copy: the scaling must not carry into the next night that
		// reuses this document.
		d, err := results.Decode("copy", mustEncode(t, docs[(n-1)%len(docs)]))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, n-1)
		d.FinishedAt = start.Add(d.FinishedAt.Sub(d.StartedAt))
		d.StartedAt = start
		d.Environment.GitCommit = nightCommit(n)
		if n >= stepFrom {
			for i := range d.Scenarios {
				for j := range d.Scenarios[i].Repetitions {
					r := &d.Scenarios[i].Repetitions[j]
					r.PeakRSSBytes = uint64(float64(r.PeakRSSBytes) * (1 + step))
				}
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("night-%02d.json.gz", n))
		if err := results.Write(p, d); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func mustEncode(t *testing.T, d *results.Run) []byte {
	t.Helper()
	data, err := results.Encode(d, results.FormatGzip)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHistoryFindsInjectedRSSStep is the done-when check of the history: 30
// nights made of real documents, a 12% step injected into peak RSS from
// night 16. history changes must find the step at night 16 (±1) in every
// configuration, and no change point in any timed metric.
func TestHistoryFindsInjectedRSSStep(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	paths := writeNights(t, dir, 30, 16, 0.12)
	if code, out, stderr := capture(t, append([]string{"history", "add", "--db", db}, paths...)...); code != exitOK {
		t.Fatalf("history add exited %d: %s\n%s", code, stderr, out)
	}
	// Adding a night again adds nothing.
	if code, out, _ := capture(t, "history", "add", "--db", db, paths[3]); code != exitOK || !strings.Contains(out, "already there") || !strings.Contains(out, ": 30 runs") {
		t.Fatalf("a night added twice: exit %d\n%s", code, out)
	}

	code, out, stderr := capture(t, "history", "changes", "--db", db, "--format", "json")
	if code != exitRegression {
		t.Fatalf("history changes exited %d, want %d (a regression): %s\n%s", code, exitRegression, stderr, out)
	}
	var changes []map[string]any
	if err := json.Unmarshal([]byte(out), &changes); err != nil {
		t.Fatalf("--format json: %v\n%s", err, out)
	}
	configs := map[string]bool{}
	for _, c := range changes {
		for _, key := range []string{"configuration", "metric", "commit", "before", "after", "p_value"} {
			if _, ok := c[key]; !ok {
				t.Errorf("a change point without %s: %v", key, c)
			}
		}
		metric, _ := c["metric"].(string)
		if metric != "peak_rss_bytes" {
			t.Errorf("a change point in %s: %v (no figure but peak RSS changed)", metric, c)
			continue
		}
		night := 0
		for n := 1; n <= 30; n++ {
			if nightCommit(n) == c["commit"] {
				night = n
			}
		}
		if night < 15 || night > 17 {
			t.Errorf("%s: peak RSS step found at night %d, want 16±1", c["configuration"], night)
		}
		before, after := c["before"].(float64), c["after"].(float64)
		if pct := 100 * (after - before) / before; !(pct >= 8 && pct <= 16) { // NaN fails too
			t.Errorf("%s: %.0f -> %.0f (%+.1f%%), want about +12%%", c["configuration"], before, after, pct)
		}
		if c["regression"] != true {
			t.Errorf("%s: a higher peak RSS not called a regression", c["configuration"])
		}
		configs[c["configuration"].(string)] = true
	}
	if len(configs) != 2 {
		t.Errorf("the step found in %d configurations (%v), want both", len(configs), configs)
	}

	code, out, _ = capture(t, "history", "changes", "--db", db)
	t.Logf("history changes:\n%s", out)
	// The text form, selected, says the same.
	code, out, _ = capture(t, "history", "changes", "--db", db, "--metric", "peak_rss_bytes", "--configuration", "^hold$")
	if code != exitRegression || !strings.Contains(out, nightCommit(16)[:12]) && !strings.Contains(out, nightCommit(15)[:12]) && !strings.Contains(out, nightCommit(17)[:12]) {
		t.Errorf("text changes: exit %d\n%s", code, out)
	}
	// Issue 41: with the night's date, not the commit alone.
	if !regexp.MustCompile(`2026-11-1[567] 02:00`).MatchString(out) {
		t.Errorf("text changes name no date of nights 15-17:\n%s", out)
	}
	// Without the step, nothing.
	flat := filepath.Join(dir, "flat.db")
	if code, _, stderr := capture(t, append([]string{"history", "add", "--db", flat}, writeNights(t, t.TempDir(), 30, 31, 0)...)...); code != exitOK {
		t.Fatal(stderr)
	}
	if code, out, _ := capture(t, "history", "changes", "--db", flat); code != exitOK || !strings.Contains(out, "no change point") {
		t.Errorf("a history without a step: exit %d\n%s", code, out)
	}

	// show draws every metric and the page.
	showDir := filepath.Join(dir, "show")
	if d := os.Getenv("PROVEBENCH_HISTORY_SHOW"); d != "" { // to look at the pictures
		showDir = d
	}
	code, out, stderr = capture(t, "history", "show", "--db", db, "-o", showDir)
	if code != exitOK || !strings.Contains(out, "peak_rss_bytes.png") || !strings.Contains(out, "history.html") {
		t.Errorf("history show exited %d: %s\n%s", code, stderr, out)
	}
}

func TestHistoryBadInput(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	notResults := writeFile(t, dir, "x.json", `{"a": 1}`)
	for _, args := range [][]string{
		{"history", "add", "--db", db, notResults},
		{"history", "add", "--db", db, "../../docs/results/cpu-simulate/simulated/results.json.gz"}, // predictions, not measurements
		{"history", "add", "--db", db, "../../history/testdata/nightly-1.json.gz"},                  // no git commit recorded
		{"history", "changes", "--db", filepath.Join(dir, "absent.db")},
		{"history", "changes", "--db", db, "--metric", "nope"},
		{"history", "changes", "--db", db, "--format", "yaml"},
		{"history", "show", "--db", db},
	} {
		if code, _, stderr := capture(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
}

// TestHistoryYoungStep is issue 32's item 5 on the nightly recipe: a +50%
// peak RSS step at night 4 (real documents, the step injected), the
// history added to night by night and read as the recipe reads it,
// `history changes --recent 5`. Nights 1-5 cannot be judged (exit 4:
// fewer than 6 runs); nights 6-8 report the step in both configurations
// (exit 3); from night 9 it has left the last 5 runs (exit 0). Before, the
// permutation test could not reach p <= 0.01 with fewer than 12 runs and
// every night exited 0.
func TestHistoryYoungStep(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	paths := writeNights(t, dir, 10, 4, 0.5)
	for n := 1; n <= 10; n++ {
		if code, out, stderr := capture(t, "history", "add", "--db", db, paths[n-1]); code != exitOK {
			t.Fatalf("night %d: history add exited %d: %s\n%s", n, code, stderr, out)
		}
		code, out, stderr := capture(t, "history", "changes", "--db", db, "--recent", "5", "--format", "json")
		var changes []map[string]any
		if err := json.Unmarshal([]byte(out), &changes); err != nil {
			t.Fatalf("night %d: %v\n%s", n, err, out)
		}
		want := exitOK
		switch {
		case n < 6:
			want = exitInconclusive
		case n <= 8:
			want = exitRegression
		}
		if code != want {
			t.Errorf("night %d: exit %d, want %d: %s\n%s", n, code, want, stderr, out)
		}
		if n < 6 && !strings.Contains(stderr, "fewer than 6 runs") {
			t.Errorf("night %d: stderr %q does not say why nothing was judged", n, stderr)
		}
		configs := map[string]bool{}
		for _, c := range changes {
			if c["metric"] != "peak_rss_bytes" || c["commit"] != nightCommit(4) || c["test"] != "gaussian" {
				t.Errorf("night %d: a change point %v, want peak RSS at night 4 (Gaussian test)", n, c)
			}
			configs[fmt.Sprint(c["configuration"])] = true
		}
		if want == exitRegression && len(configs) != 2 {
			t.Errorf("night %d: the step found in %v, want both configurations", n, configs)
		}
	}
}

// readNight is real document i (0..3) stamped with night n's commit.
func readNight(t *testing.T, i, n int) *results.Run {
	t.Helper()
	d, err := results.Read(nightlyDocs[i])
	if err != nil {
		t.Fatal(err)
	}
	d.Environment.GitCommit = nightCommit(n)
	return d
}

func writeDoc(t *testing.T, dir, name string, d *results.Run) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := results.Write(p, d); err != nil {
		t.Fatal(err)
	}
	return p
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHistoryEmptyInput is issue 32's item 8: no command passes on
// nothing. A selection that matches no series, an empty file, an empty
// history (what a failed add used to leave) and a metric the history never
// measured exit 2 with the reason; the readers write no table into a file
// that is not a history, and a refused add leaves no file behind.
func TestHistoryEmptyInput(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	paths := writeNights(t, dir, 6, 7, 0)
	if code, _, stderr := capture(t, append([]string{"history", "add", "--db", db}, paths...)...); code != exitOK {
		t.Fatal(stderr)
	}
	empty := writeFile(t, dir, "empty.db", "")
	bare := filepath.Join(dir, "bare.db") // a history without runs
	s, err := store.Open(context.Background(), bare)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"changes", "--db", db, "--configuration", "^nope$"}, `no series matches --configuration "^nope$" (configurations: hold, release)`},
		{[]string{"show", "--db", db, "--configuration", "^nope$", "-o", filepath.Join(dir, "show")}, "no series matches"},
		{[]string{"changes", "--db", db, "--metric", "peak_gpu_memory_bytes"}, "no run measured peak_gpu_memory_bytes"},
		{[]string{"changes", "--db", empty}, "not a provebench history file: an empty file"},
		{[]string{"show", "--db", empty, "-o", filepath.Join(dir, "show")}, "an empty file"},
		{[]string{"add", "--db", empty, paths[0]}, "an empty file"},
		{[]string{"changes", "--db", bare}, "the history holds no runs"},
		{[]string{"changes", "--db", filepath.Join(dir, "absent.db")}, "no such file"},
	} {
		code, out, stderr := capture(t, append([]string{"history"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d saying %q: %s%s", tc.args, code, exitUsage, tc.want, stderr, out)
		}
	}
	if b := fileBytes(t, empty); len(b) != 0 {
		t.Errorf("the empty file holds %d bytes now", len(b))
	}
	if _, err := os.Stat(filepath.Join(dir, "absent.db")); err == nil {
		t.Error("a reader created the absent history")
	}
	// A refused add creates no history.
	bad := readNight(t, 0, 1)
	bad.Scenarios[0].Repetitions[2].Index = bad.Scenarios[0].Repetitions[1].Index
	fresh := filepath.Join(dir, "fresh.db")
	if code, _, _ := capture(t, "history", "add", "--db", fresh, writeDoc(t, dir, "bad.json.gz", bad)); code != exitUsage {
		t.Errorf("a refused add: exit %d", code)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("a refused add left a history file")
	}
}

// TestHistoryDuplicateRepetition is issue 32's item 11: a repetition index
// twice in a configuration is bad input (it was SQLite's raw UNIQUE
// error, exit 1), named.
func TestHistoryDuplicateRepetition(t *testing.T) {
	dir := t.TempDir()
	d := readNight(t, 0, 1)
	sc := &d.Scenarios[0]
	var measured []int
	for j, r := range sc.Repetitions {
		if r.Measured() {
			measured = append(measured, j)
		}
	}
	sc.Repetitions[measured[1]].Index = sc.Repetitions[measured[0]].Index
	p := writeDoc(t, dir, "dup.json.gz", d)
	code, _, stderr := capture(t, "history", "add", "--db", filepath.Join(dir, "h.db"), p)
	want := fmt.Sprintf("%s: scenarios[0] (configuration %s, backend cpu): repetition index %d appears twice", p, sc.Name, sc.Repetitions[measured[0]].Index)
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, want %d saying %q: %s", code, exitUsage, want, stderr)
	}
}

// TestHistoryInsaneFigure is issue 32's item 9: a finite 1.7e308 is
// refused at add, named; a history that holds one from before is still
// read (the figure left out, the run named) and the run can be removed,
// by commit or by document.
func TestHistoryInsaneFigure(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	paths := writeNights(t, dir, 8, 9, 0)
	if code, _, stderr := capture(t, append([]string{"history", "add", "--db", db}, paths...)...); code != exitOK {
		t.Fatal(stderr)
	}
	before := fileBytes(t, db)
	d := readNight(t, 0, 9)
	d.StartedAt = d.StartedAt.AddDate(0, 1, 0)
	d.Scenarios[1].Repetitions[len(d.Scenarios[1].Repetitions)-1].SecondsPerProof = 1.7e308
	bad := writeDoc(t, dir, "night-09.json.gz", d)
	code, _, stderr := capture(t, "history", "add", "--db", db, bad)
	if code != exitUsage || !strings.Contains(stderr, bad) || !strings.Contains(stderr, "configuration "+d.Scenarios[1].Name) ||
		!strings.Contains(stderr, "seconds_per_proof 1.7e+308 s outside [0, 1e+07 s]") {
		t.Errorf("add of 1.7e308: exit %d: %s", code, stderr)
	}
	if !bytes.Equal(before, fileBytes(t, db)) {
		t.Error("the refused add changed the history")
	}

	// A history from before the bounds: the value stored as it was.
	doc, err := ingest.FromRun(readNight(t, 1, 9), bad)
	if err != nil {
		t.Fatal(err)
	}
	doc.Entries[0].Run.Time = d.StartedAt
	for i := range doc.Entries[0].Samples {
		if doc.Entries[0].Samples[i].Metric == "seconds_per_proof" {
			doc.Entries[0].Samples[i].Value = 1.7e308
		}
	}
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(context.Background(), doc.Entries); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, args := range [][]string{{"changes"}, {"show", "-o", filepath.Join(dir, "show")}} {
		code, out, stderr := capture(t, append(append([]string{"history"}, args...), "--db", db)...)
		if code != exitOK || !strings.Contains(stderr, "warning: run commit "+nightCommit(9)[:12]) || !strings.Contains(stderr, "left out") ||
			!strings.Contains(stderr, "history remove --commit "+nightCommit(9)[:12]) {
			t.Errorf("%v on a history holding 1.7e308: exit %d: %s%s", args, code, stderr, out)
		}
	}
	code, out, stderr := capture(t, "history", "remove", "--db", db, "--commit", nightCommit(9)[:10])
	if code != exitOK || !strings.Contains(out, "removed commit "+nightCommit(9)[:12]) || !strings.Contains(out, ": 8 runs") {
		t.Errorf("remove --commit: exit %d: %s%s", code, stderr, out)
	}
	if code, _, stderr := capture(t, "history", "changes", "--db", db); code != exitOK || strings.Contains(stderr, "warning") {
		t.Errorf("after the remove: exit %d: %s", code, stderr)
	}
	// By document; then nothing is left of it to remove.
	if code, out, stderr := capture(t, "history", "remove", "--db", db, paths[7]); code != exitOK || !strings.Contains(out, ": 7 runs") {
		t.Errorf("remove a document: exit %d: %s%s", code, stderr, out)
	}
	for _, args := range [][]string{
		{paths[7]},
		{"--commit", nightCommit(9)},
		{"--commit", nightCommit(1), paths[0]},
		{},
	} {
		if code, _, stderr := capture(t, append([]string{"history", "remove", "--db", db}, args...)...); code != exitUsage {
			t.Errorf("remove %v: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
}

// TestHistoryShardsAnyOrder is issue 32's item 12: a sweep run as two
// shards on two hosts and merged. Whatever order the shards and the
// merged document are added in, the history holds the same rows: two
// runs, each repetition once; what the others already hold adds nothing.
// And two different documents without started_at are two runs.
func TestHistoryShardsAnyOrder(t *testing.T) {
	dir := t.TempDir()
	var shards []shard.Input
	for k := 1; k <= 2; k++ {
		d := readNight(t, k-1, 1)
		d.Scenarios = d.Scenarios[k-1 : k]
		d.Environment.Hostname = fmt.Sprintf("host-%d", k)
		d.StartedAt = d.StartedAt.Add(time.Duration(k) * time.Hour)
		d.Shard = &results.Shard{Index: k, Count: 2, Configurations: 2, Positions: []int{k - 1}, Plan: "sweep"}
		shards = append(shards, shard.Input{Name: fmt.Sprintf("shard-%d", k), Run: d})
	}
	merged, err := shard.Merge(shards, shard.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{
		writeDoc(t, dir, "shard-1.json.gz", shards[0].Run),
		writeDoc(t, dir, "shard-2.json.gz", shards[1].Run),
		writeDoc(t, dir, "merged.json.gz", merged),
	}
	var want []store.Row
	for i, order := range [][]int{{0, 1, 2}, {2, 0, 1}, {0, 2, 1}, {1, 2, 0}, {2, 1, 0}} {
		db := filepath.Join(dir, fmt.Sprintf("h%d.db", i))
		for j, k := range order {
			code, out, stderr := capture(t, "history", "add", "--db", db, docs[k])
			if code != exitOK {
				t.Fatalf("order %v: add %s: exit %d: %s", order, docs[k], code, stderr)
			}
			// The merged document after both shards, or a shard after the
			// merged document, is there already.
			covered := j == 2 || (j == 1 && (k == 2 || order[0] == 2))
			if covered != strings.Contains(out, "already there") {
				t.Errorf("order %v: add %s: %s", order, filepath.Base(docs[k]), out)
			}
			if j == 2 && !strings.Contains(out, ": 2 runs") {
				t.Errorf("order %v: %s", order, out)
			}
		}
		s, err := store.OpenReadOnly(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.Rows(context.Background(), store.Filter{})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			rows[r].Source = ""
		}
		if len(rows) == 0 {
			t.Fatal("no rows")
		}
		if want == nil {
			want = rows
			hosts := map[string]bool{}
			for _, r := range rows {
				hosts[r.Host+" "+r.Configuration] = true
			}
			if len(hosts) != 2 {
				t.Errorf("rows of %v, want each configuration on its own shard's host", hosts)
			}
		} else if !slices.Equal(rows, want) {
			t.Errorf("order %v: %d rows differ from order %v's %d", order, len(rows), []int{0, 1, 2}, len(want))
		}
	}

	var undated []string
	for i := range 2 {
		d := readNight(t, i, 1)
		d.StartedAt = time.Time{}
		undated = append(undated, writeDoc(t, dir, fmt.Sprintf("undated-%d.json.gz", i), d))
	}
	code, out, stderr := capture(t, append([]string{"history", "add", "--db", filepath.Join(dir, "undated.db")}, undated...)...)
	if code != exitOK || strings.Contains(out, "already there") || !strings.Contains(out, ": 2 runs") {
		t.Errorf("two documents without started_at: exit %d: %s%s", code, stderr, out)
	}
}

// TestHistoryReadOnly is issue 32's item 10 on the command line: changes
// and show read a history in a folder they may not write (the file
// read-only too), change no byte and leave no file beside it; the owner's
// add works after.
func TestHistoryReadOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	db := filepath.Join(dir, "h.db")
	paths := writeNights(t, t.TempDir(), 8, 5, 0.2)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := capture(t, append([]string{"history", "add", "--db", db}, paths[:7]...)...); code != exitOK {
		t.Fatal(stderr)
	}
	before := fileBytes(t, db)
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	for _, args := range [][]string{{"changes"}, {"changes", "--format", "json"}, {"show", "-o", filepath.Join(t.TempDir(), "show")}} {
		code, out, stderr := capture(t, append(append([]string{"history"}, args...), "--db", db)...)
		want := exitRegression
		if args[0] == "show" {
			want = exitOK
		}
		if code != want {
			t.Errorf("%v on a read-only history: exit %d, want %d: %s%s", args, code, want, stderr, out)
		}
	}
	if !bytes.Equal(before, fileBytes(t, db)) {
		t.Error("a reader changed the history")
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("the folder holds %v (%v), want the history alone", entries, err)
	}
	os.Chmod(dir, 0o755)
	os.Chmod(db, 0o644)
	if code, _, stderr := capture(t, "history", "add", "--db", db, paths[7]); code != exitOK {
		t.Errorf("the owner's add after the reads: exit %d: %s", code, stderr)
	}
}

// Issue 41, item 4: a scenario changed under the same name (its pipeline,
// here) is refused with a message instead of continuing its series
// silently; a change of what does not move a repetition's figures (its
// repeats) continues it.
func TestHistoryRefusesAChangedScenario(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	nights := writeNights(t, dir, 3, 99, 0)
	if code, _, stderr := capture(t, "history", "add", "--db", db, nights[0]); code != exitOK {
		t.Fatalf("history add night 1: exit %d: %s", code, stderr)
	}
	restamp := func(p string, edit func(spec map[string]any)) {
		d, err := results.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range d.Scenarios {
			var spec map[string]any
			if err := json.Unmarshal(d.Scenarios[i].Spec, &spec); err != nil {
				t.Fatal(err)
			}
			edit(spec)
			if d.Scenarios[i].Spec, err = json.Marshal(spec); err != nil {
				t.Fatal(err)
			}
		}
		if err := results.Write(p, d); err != nil {
			t.Fatal(err)
		}
	}
	restamp(nights[1], func(spec map[string]any) { spec["repeats"] = 99.0 })
	if code, _, stderr := capture(t, "history", "add", "--db", db, nights[1]); code != exitOK {
		t.Errorf("a night whose scenarios changed only their repeats: exit %d: %s", code, stderr)
	}
	restamp(nights[2], func(spec map[string]any) { spec["pipeline"].(map[string]any)["channel_capacity"] = 7.0 })
	code, _, stderr := capture(t, "history", "add", "--db", db, nights[2])
	if code != exitUsage || !strings.Contains(stderr, "changed under the same name") || !strings.Contains(stderr, "new name") {
		t.Errorf("a night whose pipeline changed under the same names: exit %d, want %d: %s", code, exitUsage, stderr)
	}
}
