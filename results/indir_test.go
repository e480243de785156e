package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInDir(t *testing.T) {
	dir := t.TempDir()
	touch := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := InDir(dir); err == nil || !strings.Contains(err.Error(), "without a results document") {
		t.Errorf("empty folder: %v", err)
	}
	plain := touch("results.json")
	if got, err := InDir(dir); err != nil || got != plain {
		t.Errorf("folder with results.json: %q, %v", got, err)
	}
	if got, err := InDir(plain); err != nil || got != plain {
		t.Errorf("a file: %q, %v", got, err)
	}
	touch("results.json.gz")
	if _, err := InDir(dir); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("folder with both: %v", err)
	}
	os.Remove(plain)
	if got, err := InDir(dir); err != nil || got != filepath.Join(dir, "results.json.gz") {
		t.Errorf("folder with results.json.gz: %q, %v", got, err)
	}
	if _, err := InDir(filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing path resolved")
	}
}
