package main

import (
	"os"
	"path/filepath"
	"strings"
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

// Issue 32 items 1 and 13: a path under -o that leads out of it through a
// symbolic link is refused (exit 2, naming it) by run --overwrite and by
// an exec configuration's files, and the file outside is untouched.
func TestRunRefusesLinksOutOfTheOutput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	away := filepath.Join(dir, "elsewhere")
	if err := os.Mkdir(away, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := writeFile(t, away, "victim", "precious")
	check := func(what string, args []string, path string) {
		t.Helper()
		code, _, stderr := capture(t, args...)
		if code != exitUsage || !strings.Contains(stderr, path) {
			t.Errorf("%s: exit %d, stderr %q; want %d naming %s", what, code, stderr, exitUsage, path)
		}
		if data, err := os.ReadFile(victim); err != nil || string(data) != "precious" {
			t.Errorf("%s: the file outside -o holds %q (%v)", what, data, err)
		}
	}

	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(away, filepath.Join(out, "link")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, out, ".provebench-files", "results.csv\nlink/victim\n")
	check("run --overwrite", []string{"run", scen, "--repeat", "1", "--no-report", "--overwrite", "-o", out}, filepath.Join(out, "link", "victim"))

	exec := writeFile(t, dir, "e.yaml", `version: 1
defaults: {repeats: 1, warmups: 0}
scenarios:
  - name: e
    exec:
      command: ["true"]
      files: [{path: conf, content: overwritten}]
`)
	eout := filepath.Join(dir, "eout")
	conf := filepath.Join(eout, "exec", "e", "conf")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, conf); err != nil {
		t.Fatal(err)
	}
	check("exec.files", []string{"run", exec, "-o", eout}, conf)
}
