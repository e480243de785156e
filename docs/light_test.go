package docs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedDocs bounds what docs/ adds to a clone (issue 41: 33 MB, 19.5
// MB of it report plots drawn from documents committed beside them).
const maxTrackedDocs = 20 << 20

// trackedFiles lists the files git tracks under dir, or skips where this
// is no git checkout (a source archive).
func trackedFiles(t *testing.T, dir string) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "-z", dir).Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// Issue 41, item 5: a light clone.
func TestDocsStayLight(t *testing.T) {
	var total int64
	for _, f := range trackedFiles(t, ".") {
		st, err := os.Stat(f)
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		total += st.Size()
	}
	if total > maxTrackedDocs {
		t.Errorf("docs/ tracks %.1f MiB, more than %d MiB: commit only the plots a page shows (make docs-plots draws the rest)", float64(total)/(1<<20), maxTrackedDocs>>20)
	}
}

// Issue 41, item 5: every plot committed under docs/results is what
// provebench report draws from the document beside it, byte for byte, so
// the ones left out of the clone come back as they were (make docs-plots).
func TestCommittedPlotsRedraw(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds provebench and draws reports")
	}
	var pngs []string
	for _, f := range trackedFiles(t, "results") {
		if strings.HasSuffix(f, ".png") {
			pngs = append(pngs, f)
		}
	}
	if len(pngs) == 0 {
		t.Skip("no plot committed under docs/results")
	}
	bin := provebench(t)
	drawn := map[string]string{} // folder -> where its report was drawn
	for _, png := range pngs {
		dir := filepath.Dir(png)
		out, ok := drawn[dir]
		if !ok {
			out = t.TempDir()
			cmd := exec.Command(bin, "report", filepath.Join(dir, "results.json.gz"), "-o", out, "--format", "png")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: report: %v\n%s", dir, err, b)
			}
			drawn[dir] = out
		}
		want, err := os.ReadFile(png)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, filepath.Base(png)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: provebench report draws it otherwise from the document beside it (%v)", png, err)
		}
	}
}
