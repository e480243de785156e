package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// documentFolders writes two output folders of the real calibration run:
// one holding it as results.json alone (what a binary from before
// compressed documents writes), one holding it as both results.json.gz and
// results.json.
func documentFolders(t *testing.T, dir string) (one, both string) {
	t.Helper()
	doc, err := results.Read(cpuCalibrate)
	if err != nil {
		t.Fatal(err)
	}
	one, both = filepath.Join(dir, "one"), filepath.Join(dir, "both")
	for _, w := range []struct {
		dir string
		f   results.Format
	}{{one, results.FormatJSON}, {both, results.FormatJSON}, {both, results.FormatGzip}} {
		if err := os.MkdirAll(w.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.WriteFormat(filepath.Join(w.dir, w.f.FileName()), doc, w.f); err != nil {
			t.Fatal(err)
		}
	}
	return one, both
}

// Issue 31: every command that takes a results document or its folder
// finds the document the same way: a folder holding both formats is
// refused (exit 2) with one message naming both files, and nothing is
// written; a folder holding one is read whatever its format.
func TestEveryReaderFindsTheDocumentAlike(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	one, both := documentFolders(t, dir)
	// An ab folder whose base side holds both formats.
	abDir := filepath.Join(dir, "ab")
	if err := os.MkdirAll(abDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(both, filepath.Join(abDir, "base")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(one, filepath.Join(abDir, "new")); err != nil {
		t.Fatal(err)
	}
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	const predictScenario = "../../docs/results/cpu-simulate/predict.yaml"
	never := filepath.Join(dir, "never")
	db := filepath.Join(dir, "history.db")

	for _, tc := range []struct {
		name string
		args []string
		dir  string // the folder refused, when not both
	}{
		{"report", []string{"report", both, "-o", never}, ""},
		{"compare base", []string{"compare", both, one}, ""},
		{"compare new", []string{"compare", one, both}, ""},
		{"compare --paired", []string{"compare", "--paired", abDir}, filepath.Join(abDir, "base")},
		{"merge", []string{"merge", both, "-o", never}, ""},
		{"history add", []string{"history", "add", "--db", db, both}, ""},
		{"simulate --calibration", []string{"simulate", predictScenario, "--calibration", both, "--no-report", "-o", never}, ""},
		{"simulate --check", []string{"simulate", predictScenario, "--calibration", one, "--check", both, "--no-report", "-o", never}, ""},
		{"simulate --cross-validate", []string{"simulate", "--cross-validate", one, both}, ""},
		{"simulate --cross-validate --calibration", []string{"simulate", "--cross-validate", one, "--calibration", both}, ""},
		{"run --calibration", []string{"run", scen, "--calibration", both, "--no-report", "-o", never}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			if code != exitUsage {
				t.Fatalf("provebench %v: exit %d, want %d: %s", tc.args, code, exitUsage, stderr)
			}
			refused := both
			if tc.dir != "" {
				refused = tc.dir
			}
			for _, want := range []string{"more than one results document", filepath.Join(refused, "results.json.gz"), filepath.Join(refused, "results.json")} {
				if !strings.Contains(stderr, want) {
					t.Errorf("provebench %v: stderr lacks %q:\n%s", tc.args, want, stderr)
				}
			}
		})
	}
	for _, p := range []string{never, db} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a refused command wrote %s: %v", p, err)
		}
	}

	// The folder holding results.json alone is read by the same commands.
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"report", []string{"report", one, "--format", "svg", "-o", filepath.Join(dir, "report")}},
		{"compare", []string{"compare", one, one}},
		{"simulate --calibration --check", []string{"simulate", predictScenario, "--calibration", one, "--check", one, "--no-report", "-o", filepath.Join(dir, "sim")}},
	} {
		t.Run("one/"+tc.name, func(t *testing.T) {
			if code, _, stderr := capture(t, tc.args...); code != exitOK {
				t.Errorf("provebench %v: exit %d: %s", tc.args, code, stderr)
			}
		})
	}
}
