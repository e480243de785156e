package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/scenarios"
)

// Regression tests of issue 20 (hardening, round 3): exit statuses and
// first impressions.

// A repetition stopped at its timeout (or memory limit) has no figures: the
// run exits 1, as the README says, and its summary says why.
func TestRunWithTimeoutExitsOne(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	file := writeFile(t, dir, "timeout.yaml", `version: 1
defaults:
  backend: cpu
  repeats: 1
  warmups: 0
  sample_interval: 1ms
  timeout: 1ms
  workload: {constraints: 2^7, partitions: 2, proofs: 1, concurrency: 1}
scenarios:
  - name: too-slow
`)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := capture(t, "run", file, "-o", out, "--no-report", "--no-calibration-cache")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, stdout, stderr)
	}
	if !strings.Contains(stdout, "1 repetition did not finish (1 timeout): exit status 1") {
		t.Errorf("the summary does not say why it exits 1:\n%s", stdout)
	}
	if !strings.Contains(stderr, "1 repetition did not finish (1 timeout; see ") {
		t.Errorf("stderr: %s", stderr)
	}
	doc, err := results.Read(filepath.Join(out, "results.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if st := doc.Scenarios[0].Repetitions[0].Status; st != results.StatusTimeout {
		t.Errorf("status %s, want %s", st, results.StatusTimeout)
	}
}

func TestUnfinishedCounts(t *testing.T) {
	doc := &results.Run{Scenarios: []results.Scenario{
		{Repetitions: []results.Repetition{{Status: results.StatusOK}, {Status: results.StatusMemoryLimit}, {Status: results.StatusTimeout, Warmup: true}}},
		{Repetitions: []results.Repetition{{Status: results.StatusMemoryLimit}, {Status: results.StatusCancelled}}},
	}}
	if n, what := results.Unfinished(doc); n != 3 || what != "2 memory-limit, 1 timeout" {
		t.Errorf("unfinished = %d, %q", n, what)
	}
	var ee exitError
	if err := unfinishedError(doc, "out/results.json"); !errors.As(err, &ee) || ee.code != exitFailure {
		t.Errorf("unfinishedError = %v", err)
	}
}

// "1 configuration", not "1 configurations".
func TestValidateOneConfiguration(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "one.yaml", "version: 1\nscenarios:\n  - name: a\n")
	code, stdout, _ := capture(t, "validate", file)
	if code != exitOK || !strings.HasSuffix(stdout, "\n1 configuration, no problems\n") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

// Every `provebench engine FILE --scenario NAME` in a command's examples
// names a configuration FILE defines (engine --help once named hold-c1,
// which ci.yaml does not).
func TestExamplesNameExistingConfigurations(t *testing.T) {
	re := regexp.MustCompile(`provebench engine (\S+\.yaml) (?:--scenario|-s) (\S+)`)
	found := 0
	for _, c := range newRoot().Commands() {
		for _, m := range re.FindAllStringSubmatch(c.Example, -1) {
			found++
			specs, err := scenarios.Load(filepath.Join("..", "..", m[1]))
			if err != nil {
				t.Fatalf("%s --help: %s: %v", c.Name(), m[1], err)
			}
			var names []string
			for _, s := range specs {
				names = append(names, s.Name)
			}
			if !slices.Contains(names, m[2]) {
				t.Errorf("%s --help: %s defines no %s (it has %s)", c.Name(), m[1], m[2], strings.Join(names, ", "))
			}
		}
	}
	if found == 0 {
		t.Fatal("no engine example found")
	}
}

// The calibration command's line in provebench --help reads as English.
func TestCalibrationHelpLine(t *testing.T) {
	if got, want := newCalibrationCmd().Short, "Show the cached runs that run's pre-flight check fits its model to"; got != want {
		t.Errorf("calibration's help line %q, want %q", got, want)
	}
}

// Issue 20, item 7: report refuses a document past its cap before keeping
// it, and an interrupted report exits 130 having written nothing.
func TestReportBounds(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(results.MaxDocumentBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	code, _, stderr := capture(t, "report", huge, "-o", filepath.Join(dir, "never"))
	if code != exitUsage || !strings.Contains(stderr, "huge.json: more than 128 MiB of JSON (decompressed)") {
		t.Errorf("a document past the cap: exit %d, stderr %q", code, stderr)
	}

	doc := &results.Run{Schema: results.SchemaVersion, Tool: "provebench", Complete: true, Scenarios: []results.Scenario{{
		Name: "a", Strategy: "hold", Backend: "cpu", Repetitions: []results.Repetition{{Index: 1, Status: results.StatusOK, PartitionsPerSecond: 1, SecondsPerProof: 1, PeakRSSBytes: 1 << 20}},
	}}}
	small := filepath.Join(dir, "results.json")
	if err := results.Write(small, doc); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // as SIGINT or SIGTERM do (main's onInterrupt)
	out := filepath.Join(dir, "out")
	if code := execute(ctx, []string{"report", small, "-o", out, "--export", "bencher=" + filepath.Join(dir, "bmf.json")}); code != exitInterrupted {
		t.Errorf("interrupted report: exit %d, want %d", code, exitInterrupted)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("an interrupted report wrote %d files into %s", len(entries), out)
	}
	if _, err := os.Stat(filepath.Join(dir, "bmf.json")); !os.IsNotExist(err) {
		t.Errorf("an interrupted report wrote its export: %v", err)
	}
}
