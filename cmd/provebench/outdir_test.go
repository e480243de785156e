package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Issue 20 item 5: run into a finished output directory is refused; with
// --overwrite it first clears what the previous run wrote, and only that.
func TestRunIntoAFinishedDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	if code := runCLI(t, "run", scen, "--filter", "^hold$", "--repeat", "1", "--no-report", "-o", out); code != exitOK {
		t.Fatalf("first run: exit %d", code)
	}
	stale := writeFile(t, out, "timeline-old.png", "an old plot")
	mine := writeFile(t, out, "notes.txt", "a user's notes")
	manifest, err := os.ReadFile(filepath.Join(out, ".provebench-files"))
	if err != nil {
		t.Fatal(err)
	}
	// The previous run's plot, as its manifest would list it.
	if err := os.WriteFile(filepath.Join(out, ".provebench-files"), append(manifest, "timeline-old.png\n../s.yaml\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := runCLI(t, "run", scen, "--filter", "^hold$", "--repeat", "1", "--no-report", "-o", out); code != exitUsage {
		t.Fatalf("second run without --overwrite: exit %d, want %d", code, exitUsage)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatal("the refused run removed a file")
	}
	if code := runCLI(t, "run", scen, "--filter", "^release$", "--repeat", "1", "--no-report", "--overwrite", "-o", out); code != exitOK {
		t.Fatalf("--overwrite: exit %d", code)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("--overwrite left the previous run's plot")
	}
	for _, keep := range []string{mine, scen} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("--overwrite removed %s, which provebench did not write inside -o", keep)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "results.json.gz")); err != nil {
		t.Error("no new results")
	}
}

// Issue 20 item 4: a swept ".." in an exec file path is refused before
// anything is written.
func TestRunRefusesExecPathsOutsideTheOutput(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "e.yaml", `version: 1
defaults:
  repeats: 1
  warmups: 0
  exec:
    command: ["true"]
    files:
      - {path: "{{.Vars.d}}/{{.Vars.d}}/{{.Vars.d}}/escaped.txt", content: x}
matrix:
  - name: m
    axes: {vars.d: ["ok", ".."]}
`)
	out := filepath.Join(dir, "a", "out")
	if code := runCLI(t, "run", scen, "-o", out); code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Error("the refused run created its output directory")
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "escaped.txt")); !os.IsNotExist(err) {
		t.Error("a file was written outside -o")
	}
}
