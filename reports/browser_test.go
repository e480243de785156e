package reports

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// Issue 41, item 6 (report.html in headless Chromium): the header said the
// commit three times, "provebench v0.0.0-2026...-792793745eca 792793745ecad6d0...,
// commit 792793745ecad6d0..."; the version from the build names it once.
func TestHeaderNamesTheCommitOnce(t *testing.T) {
	commit := "792793745ecad6d0fdecfb25ca93fa964d8d5a2c"
	run := &results.Run{ToolVersion: "v0.0.0-20261204192000-792793745eca " + commit}
	run.Environment.GitCommit = commit
	tool := runMeta(run)[0]
	if n := strings.Count(tool, commit); n != 1 {
		t.Errorf("the header names the commit %d times: %q", n, tool)
	}
	if !strings.Contains(tool, "v0.0.0-20261204192000-792793745eca, commit "+commit) {
		t.Errorf("the header lost the version or the commit: %q", tool)
	}
	run.ToolVersion = "(devel)" // a build that records no commit in its version
	if tool := runMeta(run)[0]; !strings.Contains(tool, "(devel), commit "+commit) {
		t.Errorf("a version without the commit: %q", tool)
	}
}

// Issue 41, item 6: at a phone's width (390 px) the header's hashes ran
// past the page's edge; they wrap, and the page's margins shrink.
func TestReportFitsAPhone(t *testing.T) {
	run := fixtureRun(t, false, fixtureShapes)
	dir := t.TempDir()
	if _, err := Generate(run, dir, Options{Formats: []string{"png"}}); err != nil {
		t.Fatal(err)
	}
	html := string(readFile(t, filepath.Join(dir, HTMLFile)))
	for _, want := range []string{`name="viewport" content="width=device-width`, "ul.meta { color: #57606a; padding-left: 1.2rem; overflow-wrap: anywhere; }", "@media (max-width: 600px)", `class="scroll"`} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
