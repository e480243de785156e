package main

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
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
