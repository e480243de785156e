// Package docsresults tests scripts/docs-results.sh.
package docsresults

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Issue 42 case 9: regenerating a folder's report removed every PNG and
// SVG in it, a user's own screenshot and diagram too, and left the
// manifest listing files that were gone. It removes only the pictures the
// manifest lists (and the report's own two documents), and the manifest
// then lists what is there. The report is a stand-in that writes one
// picture: the script's handling of the folder is what is tested.
func TestDocsResultsTouchesOnlyItsOwnFiles(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "f")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../history/testdata/nightly-1.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(folder, "results.json.gz"), string(doc))
	write(t, filepath.Join(folder, "report.md"), "old report")
	write(t, filepath.Join(folder, "stale.png"), "provebench's old plot")
	write(t, filepath.Join(folder, "screenshot.png"), "the user's")
	write(t, filepath.Join(folder, "diagram.svg"), "the user's")
	write(t, filepath.Join(folder, ".provebench-files"), "results.json.gz\nstale.png\nreport.md\n")
	bin := filepath.Join(dir, "provebench")
	write(t, bin, "#!/bin/sh\n[ \"$1\" = report ] || exit 1\necho new >\"$4/report.md\"\necho png >\"$4/plot.png\"\n")
	cmd := exec.Command("sh", "scripts/docs-results.sh", folder)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "BIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	entries, _ := os.ReadDir(folder)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, want := range []string{"screenshot.png", "diagram.svg", "plot.png", "report.md"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is gone: the folder holds %v", want, names)
		}
	}
	if slices.Contains(names, "stale.png") {
		t.Error("stale.png, listed in the manifest, was kept")
	}
	m, _ := os.ReadFile(filepath.Join(folder, ".provebench-files"))
	listed := strings.Fields(string(m))
	for _, name := range listed {
		if !slices.Contains(names, name) {
			t.Errorf("the manifest lists %s, which is gone", name)
		}
	}
	if !slices.Contains(listed, "plot.png") || slices.Contains(listed, "screenshot.png") {
		t.Errorf("manifest %v: want the regenerated plot.png listed, the user's screenshot not", listed)
	}
}
