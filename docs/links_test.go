package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	// anchorDrop is what GitHub leaves out of a heading's anchor.
	anchorDrop = regexp.MustCompile("[^\\p{L}\\p{N} _-]")
)

// anchors lists a Markdown file's heading anchors as GitHub makes them.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(text, -1) {
		a := strings.ToLower(anchorDrop.ReplaceAllString(m[1], ""))
		out[strings.ReplaceAll(a, " ", "-")] = true
	}
	return out
}

// Issue 41: moving the README's reference into docs/ moved its links; a
// relative link in README.md or docs/*.md names a file that exists, and an
// anchor one of the target's headings.
func TestRelativeLinksResolve(t *testing.T) {
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			full := file
			if path != "" {
				full = filepath.Join(filepath.Dir(file), path)
			}
			st, err := os.Stat(full)
			if err != nil {
				t.Errorf("%s: link %s: %v", file, target, err)
				continue
			}
			if anchor == "" || st.IsDir() || !strings.HasSuffix(full, ".md") {
				continue
			}
			text, err := os.ReadFile(full)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(text))[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", file, target, full, anchor)
			}
		}
	}
}
