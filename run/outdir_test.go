package run

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A folder holding a results document of either format, or only the
// manifest of a command that wrote there, is finished: a run into it is
// refused until --overwrite clears what was written, and only that.
func TestCheckFinishedAndClear(t *testing.T) {
	for _, name := range []string{"results.json.gz", "results.json", ".provebench-files"} {
		dir := t.TempDir()
		if err := CheckFinished(dir); err != nil {
			t.Fatalf("an empty folder: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		notes := filepath.Join(dir, "notes.txt")
		if err := os.WriteFile(notes, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := CheckFinished(dir); !errors.Is(err, ErrFinished) || !errors.Is(err, ErrOutDir) {
			t.Errorf("a folder holding %s: %v, want ErrFinished", name, err)
		}
		if err := ClearOutDir(dir); err != nil {
			t.Fatal(err)
		}
		if err := CheckFinished(dir); err != nil {
			t.Errorf("cleared of %s: %v", name, err)
		}
		if _, err := os.Stat(notes); err != nil {
			t.Errorf("clearing %s removed a file no command wrote: %v", name, err)
		}
	}
}
