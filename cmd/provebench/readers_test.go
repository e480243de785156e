package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression tests of issue 32 item 2: every command that reads results
// documents refuses a small file that expands past the readers' limits,
// at once.

// readers are the commands that read a results document, each with the
// document to read in place of DOC and a scratch folder in place of DIR.
func readers(scenario string) [][]string {
	return [][]string{
		{"report", "DOC", "-o", "DIR/report"},
		{"compare", cpuCalibrate, "DOC"},
		{"merge", "DOC", "-o", "DIR/merge"},
		{"history", "add", "--db", "DIR/history.db", "DOC"},
		{"simulate", scenario, "--calibration", "DOC", "-o", "DIR/simulate"},
		{"simulate", "--cross-validate", cpuCalibrate, "DOC"},
		{"run", scenario, "--calibration", "DOC", "-o", "DIR/run"},
	}
}

// fill puts doc and dir into a reader's arguments.
func fill(args []string, doc, dir string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "DOC", doc)
		out[i] = strings.ReplaceAll(a, "DIR", dir)
	}
	return out
}

// Item 2: 64 MiB of zeros in a 64 KiB gzip file, and a document behind
// more whitespace than the limit, are bad input to every reader, which
// says so naming the file and writes nothing.
func TestReadersRefuseSmallFilesThatExpand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	compressed := func(name string, pattern byte, n int) string {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		chunk := bytes.Repeat([]byte{pattern}, 1<<20)
		for range n >> 20 {
			zw.Write(chunk)
		}
		zw.Write([]byte(`{"schema":2,"tool":"provebench","scenarios":[]}`))
		zw.Close()
		return writeFile(t, dir, name, b.String())
	}
	for _, doc := range []string{compressed("zeros.json.gz", 0, 64<<20), compressed("padded.json.gz", ' ', 129<<20)} {
		for _, args := range readers(scen) {
			args = fill(args, doc, filepath.Join(dir, "out"))
			code, _, stderr := capture(t, args...)
			if code != exitUsage || !strings.Contains(stderr, doc+": ") {
				t.Errorf("provebench %s: exit %d, stderr %q; want %d naming %s", strings.Join(args, " "), code, stderr, exitUsage, doc)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("a refused document left output behind: %v", err)
	}
}
