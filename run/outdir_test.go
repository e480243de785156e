package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
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

// Regression tests of issue 32 (paths): nothing outside -o is removed or
// written through a symbolic link inside it.

// outside makes a folder beside -o holding one file, and returns both.
func outside(t *testing.T, base string) (dir, file string) {
	t.Helper()
	dir = filepath.Join(base, "elsewhere")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "victim")
	if err := os.WriteFile(file, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

// intact fails the test unless file still holds "precious".
func intact(t *testing.T, file string) {
	t.Helper()
	if data, err := os.ReadFile(file); err != nil || string(data) != "precious" {
		t.Errorf("%s outside -o: %q, %v; want it untouched", file, data, err)
	}
}

// Item 1: a manifest line under a folder that is a symbolic link out of
// -o is refused, naming it, and nothing is removed, not even the files
// that do lie inside.
func TestClearOutDirRefusesLinksOut(t *testing.T) {
	base := t.TempDir()
	away, victim := outside(t, base)
	out := filepath.Join(base, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(away, filepath.Join(out, "link")); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(out, "results.csv")
	if err := os.WriteFile(mine, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, results.ManifestName), []byte("results.csv\nlink/victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := ClearOutDir(out)
	if !errors.Is(err, ErrOutDir) || !strings.Contains(err.Error(), filepath.Join(out, "link", "victim")) {
		t.Fatalf("ClearOutDir: %v; want ErrOutDir naming %s", err, filepath.Join(out, "link", "victim"))
	}
	intact(t, victim)
	for _, f := range []string{mine, filepath.Join(out, results.ManifestName)} {
		if _, err := os.Lstat(f); err != nil {
			t.Errorf("a refused clear removed %s: %v", f, err)
		}
	}

	// A manifest that is itself a link out of -o is not read.
	if err := os.Remove(filepath.Join(out, results.ManifestName)); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(away, "list")
	if err := os.WriteFile(list, []byte("results.csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(list, filepath.Join(out, results.ManifestName)); err != nil {
		t.Fatal(err)
	}
	if err := ClearOutDir(out); !errors.Is(err, ErrOutDir) {
		t.Errorf("a manifest linked out of -o: %v, want ErrOutDir", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a refused clear removed %s", mine)
	}

	// Links whose folders stay inside are removed as links: what they
	// point to stays.
	if err := os.Remove(filepath.Join(out, results.ManifestName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(out, "report.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, results.ManifestName), []byte("results.csv\n../elsewhere/victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ClearOutDir(out); err != nil {
		t.Fatalf("ClearOutDir: %v", err)
	}
	intact(t, victim)
	for _, f := range []string{mine, filepath.Join(out, "report.md"), filepath.Join(out, results.ManifestName)} {
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", f, err)
		}
	}
}

// The lock and the manifest are the run's own files: a link planted under
// their names is neither written through nor truncated.
func TestOutDirFilesAreNotWrittenThroughLinks(t *testing.T) {
	base := t.TempDir()
	_, victim := outside(t, base)
	out := filepath.Join(base, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(out, lockName)); err != nil {
		t.Fatal(err)
	}
	if _, err := LockOutDir(out); !errors.Is(err, ErrOutDir) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a lock file linked out of -o: %v, want ErrOutDir saying it is a link", err)
	}
	intact(t, victim)

	created := filepath.Join(base, "elsewhere", "created")
	if err := os.Symlink(created, filepath.Join(out, results.ManifestName)); err != nil {
		t.Fatal(err)
	}
	if err := (results.Folder{Dir: out}).WriteManifest([]string{filepath.Join(out, "results.csv")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(created); !os.IsNotExist(err) {
		t.Errorf("the manifest was written through a link, to %s", created)
	}
	if st, err := os.Lstat(filepath.Join(out, results.ManifestName)); err != nil || !st.Mode().IsRegular() {
		t.Errorf("the manifest is not a file of its own: %v", err)
	}
}
