package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// realSchema1 is a real CPU calibration run, written as indented schema-1
// JSON by an earlier provebench.
const realSchema1 = "../../predict/calibcache/testdata/calibration-cpu.json"

// TestReadersTakeEitherFormat: report, compare and simulate's --calibration
// and --check read a plain schema-1 document and a gzip one whose name
// says .json: the reader goes by content.
func TestReadersTakeEitherFormat(t *testing.T) {
	dir := t.TempDir()
	doc, err := results.Read(realSchema1)
	if err != nil {
		t.Fatal(err)
	}
	misnamed := filepath.Join(dir, "calibration.json")
	if err := results.WriteFormat(misnamed, doc, results.FormatGzip); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := capture(t, "report", misnamed, "-o", filepath.Join(dir, "report"), "--format", "png"); code != exitOK {
		t.Fatalf("report of gzip named .json: exit %d: %s", code, stderr)
	}
	if code, _, stderr := capture(t, "compare", realSchema1, misnamed); code != exitOK {
		t.Fatalf("compare of plain schema 1 and gzip schema 2: exit %d: %s", code, stderr)
	}
	scen := "../../docs/results/cpu-simulate/predict.yaml"
	code, out, stderr := capture(t, "simulate", scen, "--calibration", misnamed, "--check", realSchema1, "--no-report", "-o", filepath.Join(dir, "sim"))
	if code != exitOK || !strings.Contains(out, "predictions for "+realSchema1) {
		t.Fatalf("simulate --calibration gzip --check plain: exit %d: %s\n%s", code, stderr, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "sim", "results.json.gz")); err != nil {
		t.Errorf("simulate did not write results.json.gz: %v", err)
	}
}

// TestRunResultsFormatJSON: --results-format json writes an indented
// results.json and no results.json.gz; a bad value is bad input.
func TestRunResultsFormatJSON(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	out := filepath.Join(dir, "plain")
	if code, _, stderr := capture(t, "run", scen, "--repeat", "1", "--warmups", "0", "--no-report", "--results-format", "json", "-o", out); code != exitOK {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil || results.IsGzip(data) || !strings.HasPrefix(string(data), "{\n") {
		t.Fatalf("results.json: %v, gzip %v", err, results.IsGzip(data))
	}
	if _, err := os.Stat(filepath.Join(out, "results.json.gz")); !os.IsNotExist(err) {
		t.Errorf("results.json.gz written too: %v", err)
	}
	if code, _, _ := capture(t, "run", scen, "--results-format", "xml", "-o", filepath.Join(dir, "x")); code != exitUsage {
		t.Errorf("--results-format xml: exit %d, want %d", code, exitUsage)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Error("bad input left an output directory behind")
	}
}
