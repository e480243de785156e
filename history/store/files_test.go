package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sidecars are the files SQLite may leave beside a database.
func sidecars(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			out = append(out, filepath.Base(path+suffix))
		}
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNotAHistory is issue 32's item 8 in the store: an empty file,
// another format, another program's SQLite database or a newer layout is
// refused by readers and writers alike (ErrNotHistory), and none of them
// gets a table written into it.
func TestNotAHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE notes (x TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	newer := filepath.Join(dir, "newer.db")
	openT(t, newer).Close()
	db, _ = sql.Open("sqlite", newer)
	if _, err := db.Exec("PRAGMA user_version = 9"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "text.db")
	if err := os.WriteFile(text, []byte("results, not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"empty": empty, "text": text, "another database": other, "a newer layout": newer} {
		before := readFile(t, path)
		for mode, openFn := range map[string]func(context.Context, string) (*Store, error){"read-only": OpenReadOnly, "writer": Open} {
			s, err := openFn(ctx, path)
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, ErrNotHistory) {
				t.Errorf("%s, %s: %v, want %v", name, mode, err, ErrNotHistory)
			}
		}
		if !bytes.Equal(before, readFile(t, path)) {
			t.Errorf("%s: the file changed", name)
		}
		if sc := sidecars(t, path); len(sc) > 0 {
			t.Errorf("%s: left %v", name, sc)
		}
	}
	if _, err := OpenReadOnly(ctx, filepath.Join(dir, "absent.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an absent file, read-only: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "absent.db")); err == nil {
		t.Error("a reader created the file")
	}
	if strings.Contains(strings.Join(mustGlob(t, dir, ".*.new-*"), ""), "new") {
		t.Errorf("creation left %v", mustGlob(t, dir, ".*.new-*"))
	}
}

func mustGlob(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReaderWritesNothing is issue 32's item 10: a reader changes no byte
// of the file and leaves nothing beside it (another user's reader used to
// leave -wal and -shm files the owner's next add could not write), also
// in a folder it may not write (where the test runs as root, which may,
// the bytes and the absent files are what it checks). A history an older
// provebench wrote in WAL mode is converted by the next writer.
func TestReaderWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ro")
	path := filepath.Join(dir, "h.db")
	s := openT(t, path)
	if _, err := s.Add(ctx, entry(1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// An older provebench's file: WAL mode.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO runs (commit_id, started_at, host, added_at) VALUES ('legacy', '2026-01-01T00:00:00.000000000Z', 'h', '')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	w := openT(t, path)
	if _, err := w.RemoveCommit(ctx, "legacy"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if sc := sidecars(t, path); len(sc) > 0 {
		t.Fatalf("the writer left %v", sc)
	}
	before := readFile(t, path)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	for range 2 {
		r, err := OpenReadOnly(ctx, path)
		if err != nil {
			t.Fatalf("read-only: %v", err)
		}
		rows, err := r.Rows(ctx, Filter{})
		if err != nil || len(rows) != 12 {
			t.Fatalf("read-only: %d rows, %v", len(rows), err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(before, readFile(t, path)) {
		t.Error("a reader changed the file")
	}
	if sc := sidecars(t, path); len(sc) > 0 {
		t.Errorf("a reader left %v", sc)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openT(t, path).Add(ctx, entry(2, 2, 3)); err != nil {
		t.Errorf("the owner's add after the reads: %v", err)
	}
}

// TestReaderDoesNotWaitForWriter: while an add holds its transaction open
// (every row written, the commit not yet made), a reader opens the file
// and reads the history as it was. A reader used to take the write lock
// to check the layout and waited up to the writer's timeout.
func TestReaderDoesNotWaitForWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	s := openT(t, path)
	if _, err := s.Add(ctx, entry(1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		_, err := s.add(ctx, entry(2, 50, 20), func() {
			close(inside)
			<-release
		})
		writerDone <- err
	}()
	<-inside
	read := make(chan error, 1)
	go func() {
		r, err := OpenReadOnly(ctx, path)
		if err != nil {
			read <- err
			return
		}
		defer r.Close()
		n, err := r.Runs(ctx)
		if err == nil && n != 1 {
			err = errors.New("the reader saw the uncommitted run")
		}
		read <- err
	}()
	select {
	case err := <-read:
		if err != nil {
			t.Errorf("reading beside a writer: %v", err)
		}
	case <-time.After(BusyTimeout / 2):
		t.Error("the reader waited for the writer's transaction")
	}
	close(release)
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
}

// TestAddUnion is issue 32's item 12 in the store: adding runs whose key
// is there adds only the samples it lacks; a sample with another value is
// refused, and nothing of that add is stored.
func TestAddUnion(t *testing.T) {
	ctx := context.Background()
	s := openT(t, filepath.Join(t.TempDir(), "h.db"))
	all := samples(1, 2, 3)
	if n, err := s.Add(ctx, []Entry{{Run: run(1), Samples: all[:5]}}); err != nil || n != (Added{Runs: 1, Samples: 5}) {
		t.Fatalf("first part: %+v, %v", n, err)
	}
	if n, err := s.Add(ctx, []Entry{{Run: run(1), Samples: all}}); err != nil || n != (Added{Samples: 7, Known: 5}) {
		t.Fatalf("the whole: %+v, %v", n, err)
	}
	bad := slices.Clone(all)
	bad[3].Value++
	n, err := s.Add(ctx, []Entry{{Run: run(2), Samples: samples(2, 1, 1)}, {Run: run(1), Samples: bad}})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "repetition 1") {
		t.Fatalf("a conflicting value: %+v, %v", n, err)
	}
	if runs, _ := s.Runs(ctx); runs != 1 {
		t.Errorf("%d runs after the refused add, want 1 (all of it or none)", runs)
	}
}

// TestRemove is issue 32's item 9's way out: a run taken out by its key
// or its commit, with every sample.
func TestRemove(t *testing.T) {
	ctx := context.Background()
	s := openT(t, filepath.Join(t.TempDir(), "h.db"))
	for i := 1; i <= 3; i++ {
		if _, err := s.Add(ctx, entry(i, 2, 3)); err != nil {
			t.Fatal(err)
		}
	}
	again := run(2)
	again.Time = again.Time.Add(time.Hour) // a second run of commit 2
	if _, err := s.Add(ctx, []Entry{{Run: again, Samples: samples(2, 1, 1)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RemoveCommit(ctx, "0000"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("an ambiguous prefix: %v", err)
	}
	got, err := s.RemoveCommit(ctx, run(2).Commit)
	if err != nil || len(got) != 2 || got[0].Commit != run(2).Commit || got[0].Samples+got[1].Samples != 14 {
		t.Fatalf("remove commit 2: %+v, %v", got, err)
	}
	got, err = s.RemoveRuns(ctx, []Run{run(3), run(7)})
	if err != nil || len(got) != 1 || !got[0].Time.Equal(run(3).Time) || got[0].Samples != 12 {
		t.Fatalf("remove run 3 (and the absent 7): %+v, %v", got, err)
	}
	if got, err := s.RemoveCommit(ctx, run(2).Commit); err != nil || len(got) != 0 {
		t.Errorf("a commit no longer there: %+v, %v", got, err)
	}
	rows, err := s.Rows(ctx, Filter{})
	if err != nil || len(rows) != 12 || rows[0].Commit != run(1).Commit {
		t.Fatalf("left: %d rows, %v", len(rows), err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
