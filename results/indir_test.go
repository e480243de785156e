package results

import (
	"errors"
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
	if _, err := InDir(dir); err == nil || !strings.Contains(err.Error(), "without a results document") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty folder: %v", err)
	}
	plain := touch("results.json")
	if got, err := InDir(dir); err != nil || got != plain {
		t.Errorf("folder with results.json: %q, %v", got, err)
	}
	if got, err := InDir(plain); err != nil || got != plain {
		t.Errorf("a file: %q, %v", got, err)
	}
	gz := touch("results.json.gz")
	_, err := InDir(dir)
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), gz) || !strings.Contains(err.Error(), plain) {
		t.Errorf("folder with both: %v; want ErrAmbiguous naming %s and %s", err, gz, plain)
	}
	if got, err := InDir(plain); err != nil || got != plain {
		t.Errorf("a file named in a folder with both: %q, %v", got, err)
	}
	if err := RemoveOthers(dir, FormatGzip); err != nil {
		t.Fatal(err)
	}
	if got, err := InDir(dir); err != nil || got != gz {
		t.Errorf("folder with results.json.gz: %q, %v", got, err)
	}
	if _, err := os.Stat(plain); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RemoveOthers left results.json: %v", err)
	}
	if _, err := InDir(filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing path resolved")
	}
}
