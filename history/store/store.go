package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// BusyTimeout is how long a writer (Add, Remove) waits for another
// process's write to finish before it fails.
const BusyTimeout = 60 * time.Second

// ReadBusyTimeout is how long a reader waits while a writer commits (the
// only time a writer keeps readers out) before it fails.
const ReadBusyTimeout = 10 * time.Second

// FileName is the history file's name in its default folder.
const FileName = "history.db"

// DefaultPath is the history file under a cache folder (provebench's key
// cache: ~/.cache/provebench/keys, or $PROVEBENCH_CACHE).
func DefaultPath(cacheDir string) string { return filepath.Join(cacheDir, FileName) }

// schemaVersion is the layout below, kept in SQLite's user_version.
const schemaVersion = 1

const schema = `
CREATE TABLE runs (
	id           INTEGER PRIMARY KEY,
	commit_id    TEXT NOT NULL,
	started_at   TEXT NOT NULL, -- RFC 3339, UTC, nanoseconds: sorts as time
	host         TEXT NOT NULL,
	cpu_model    TEXT NOT NULL DEFAULT '',
	tool_version TEXT NOT NULL DEFAULT '',
	source       TEXT NOT NULL DEFAULT '',
	added_at     TEXT NOT NULL,
	UNIQUE (commit_id, started_at, host)
);
CREATE TABLE samples (
	run           INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	backend       TEXT NOT NULL,
	configuration TEXT NOT NULL,
	metric        TEXT NOT NULL,
	repetition    INTEGER NOT NULL,
	value         REAL NOT NULL,
	PRIMARY KEY (run, backend, configuration, metric, repetition)
);
CREATE INDEX samples_series ON samples (metric, configuration, backend);
`

// ErrNotHistory marks a file that is not a history: empty, not SQLite,
// another program's database, or a layout this provebench does not read.
var ErrNotHistory = errors.New("not a provebench history file")

// ErrConflict marks a document holding another value for a repetition
// the history already holds (same run, configuration, metric and
// repetition).
var ErrConflict = errors.New("conflicts with the history")

// Store is an open history file.
type Store struct {
	db       *sql.DB
	path     string
	readOnly bool
}

// Open opens the history file at path for writing, creating it (and its
// folder) when absent: the new file is made whole beside it and linked
// into place, so that path is never a half-made history. An existing file
// must be a history (ErrNotHistory otherwise): Open writes no table into
// anything else.
func Open(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := create(ctx, path); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	s, err := open(ctx, path, false)
	if err != nil {
		return nil, err
	}
	// A history written by an older provebench may be in WAL mode, whose
	// readers need -wal and -shm files beside it: a read-only mount could
	// not read it, and another user's reader left files the owner could not
	// write. The rollback journal needs nothing beside the file to read it.
	if _, err := s.db.ExecContext(ctx, "PRAGMA journal_mode = DELETE"); err != nil {
		s.Close()
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	return s, nil
}

// OpenReadOnly opens an existing history file for reading only: it
// writes nothing, creates no file beside it (a read-only mount will do),
// and does not wait for writers but while one commits.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	return open(ctx, path, true)
}

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	if readOnly {
		q.Set("mode", "ro")
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", ReadBusyTimeout.Milliseconds()))
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "synchronous(FULL)")
		// Keep a transaction's pages in memory until it commits: readers are
		// kept out only while it writes them, not for the whole Add.
		q.Add("_pragma", "cache_spill(false)")
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

func open(ctx context.Context, path string, readOnly bool) (*Store, error) {
	db, err := sql.Open("sqlite", dsn(path, readOnly))
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	// One connection: the pragmas above hold on it, and a history is read
	// or written by one statement at a time.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, readOnly: readOnly}
	if err := s.check(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// check refuses a file that is not a history of this layout.
func (s *Store) check(ctx context.Context) error {
	var v, tables int
	err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	if err == nil {
		err = s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('runs', 'samples')").Scan(&tables)
	}
	if err != nil {
		if code(err) == sqlite3.SQLITE_NOTADB {
			return fmt.Errorf("history %s: %w (not an SQLite file)", s.path, ErrNotHistory)
		}
		return s.wrap(err)
	}
	switch {
	case v == schemaVersion && tables == 2:
		return nil
	case v > schemaVersion:
		return fmt.Errorf("history %s: %w: layout version %d, this provebench reads %d", s.path, ErrNotHistory, v, schemaVersion)
	}
	if st, err := os.Stat(s.path); err == nil && st.Size() == 0 {
		return fmt.Errorf("history %s: %w: an empty file (remove it: history add creates the history when there is no file)", s.path, ErrNotHistory)
	}
	return fmt.Errorf("history %s: %w: an SQLite database without a history's tables", s.path, ErrNotHistory)
}

// wrap names the file and says what a reader can do about a locked
// history or one an interrupted write left to roll back.
func (s *Store) wrap(err error) error {
	switch c := code(err); {
	case c&0xff == sqlite3.SQLITE_BUSY:
		return fmt.Errorf("history %s: another process is writing it (still after %s): %w", s.path, s.busyTimeout(), err)
	case c == sqlite3.SQLITE_READONLY_ROLLBACK:
		return fmt.Errorf("history %s: a write was interrupted and must be rolled back, which a reader cannot do (history add or history remove does it): %w", s.path, err)
	case c&0xff == sqlite3.SQLITE_CANTOPEN && s.readOnly:
		if _, jerr := os.Stat(s.path + "-journal"); jerr == nil {
			return fmt.Errorf("history %s: a write was interrupted and must be rolled back, which a reader cannot do (history add or history remove does it): %w", s.path, err)
		}
	}
	return fmt.Errorf("history %s: %w", s.path, err)
}

func (s *Store) busyTimeout() time.Duration {
	if s.readOnly {
		return ReadBusyTimeout
	}
	return BusyTimeout
}

// code is SQLite's extended result code of err, or 0.
func code(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// create makes an empty history at path: written whole in a file beside
// it, then linked to path, which fails harmlessly when another process
// created it first.
func create(ctx context.Context, path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	defer os.Remove(tmp + "-journal")
	if err := initialise(ctx, tmp); err != nil {
		return fmt.Errorf("history %s: create: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: rename, which may replace an
		// empty history another process made in the meantime.
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("history %s: %w", path, err)
		}
	}
	return nil
}

// initialise writes the layout into the empty file at path.
func initialise(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return db.Close()
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Path is the file's path.
func (s *Store) Path() string { return s.path }

// Run identifies one run: the key (Commit, Time, Host) and what else the
// history shows about it. A run is what one host ran of one commit from
// one start: a document, or one shard of a merged document.
type Run struct {
	Commit      string
	Time        time.Time
	Host        string
	CPUModel    string
	ToolVersion string
	// Source is the file the run was first added from.
	Source string
}

func (r Run) String() string {
	c := r.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	return fmt.Sprintf("commit %s, %s, %s", c, r.Time.UTC().Format(time.RFC3339), r.Host)
}

// Sample is one measured repetition's value of a metric.
type Sample struct {
	Backend       string
	Configuration string
	Metric        string
	Repetition    int
	Value         float64
}

// Entry is a run and its samples.
type Entry struct {
	Run     Run
	Samples []Sample
	// Scenarios fingerprint what the run measured of each configuration
	// (its workload, pipeline, backend, key and clock), so that a scenario
	// changed under the same name is not taken for the series it was.
	Scenarios []Scenario
}

// Scenario is what a configuration of a run measured, as a fingerprint of
// its settings.
type Scenario struct {
	Backend, Configuration string
	Fingerprint            string
}

// ErrScenarioChanged marks a configuration whose settings differ from
// those its series was stored with: its figures would join a series of
// another scenario.
var ErrScenarioChanged = errors.New("changed under the same name")

// scenariosTable keeps each series' fingerprint: the one its first stored
// run measured. An older provebench reads and writes the other tables as
// before; a history it wrote gets the table at its next add, its series
// fingerprinted from then on.
const scenariosTable = `CREATE TABLE IF NOT EXISTS scenarios (
	backend       TEXT NOT NULL,
	configuration TEXT NOT NULL,
	fingerprint   TEXT NOT NULL,
	first_run     TEXT NOT NULL,
	PRIMARY KEY (backend, configuration)
)`

// checkScenarios refuses a run whose configuration's fingerprint differs
// from its series', and records the fingerprint of a series new to the
// history (or whose runs were all removed).
func checkScenarios(ctx context.Context, tx *sql.Tx, r Run, scs []Scenario) error {
	if len(scs) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, scenariosTable); err != nil {
		return err
	}
	for _, sc := range scs {
		var held, first string
		err := tx.QueryRowContext(ctx, "SELECT fingerprint, first_run FROM scenarios WHERE backend = ? AND configuration = ?",
			sc.Backend, sc.Configuration).Scan(&held, &first)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case held == sc.Fingerprint:
			continue
		default:
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM samples WHERE backend = ? AND configuration = ?",
				sc.Backend, sc.Configuration).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("configuration %s (%s) %w: its settings (workload, pipeline, backend, key or clock) differ from those of its series, first stored from %s; its figures would join another scenario's: give the changed scenario a new name (a new series), or take the old series out (history remove)",
					sc.Configuration, sc.Backend, ErrScenarioChanged, first)
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO scenarios (backend, configuration, fingerprint, first_run) VALUES (?, ?, ?, ?) ON CONFLICT (backend, configuration) DO UPDATE SET fingerprint = excluded.fingerprint, first_run = excluded.first_run",
			sc.Backend, sc.Configuration, sc.Fingerprint, r.String()); err != nil {
			return err
		}
	}
	return nil
}

// ErrNoCommit is returned for a run without a commit: the history orders
// and names points by commit.
var ErrNoCommit = errors.New("no git commit recorded (build provebench from a git checkout: make build)")

// ErrNoTime is returned for a run without a start: the history orders a
// series' points by their runs' starts.
var ErrNoTime = errors.New("no start time recorded (started_at)")

// Added counts what an Add stored.
type Added struct {
	// Runs and Samples are the runs and samples new to the history.
	Runs, Samples int
	// Known is the number of samples the history held already.
	Known int
}

// Add stores runs and their samples in one transaction: all of them or,
// on an error, none. A run whose key is there already gets the samples it
// lacks, so that adding a document twice, or a merged document and its
// shards in any order, stores each repetition once. A sample the history
// holds with another value is refused (ErrConflict).
func (s *Store) Add(ctx context.Context, entries []Entry) (Added, error) {
	return s.add(ctx, entries, nil)
}

// add is Add with a hook called inside the transaction once every row is
// written, before the commit (tests kill the process there).
func (s *Store) add(ctx context.Context, entries []Entry, beforeCommit func()) (Added, error) {
	var n Added
	for _, e := range entries {
		switch {
		case e.Run.Commit == "":
			return n, ErrNoCommit
		case e.Run.Time.IsZero():
			return n, ErrNoTime
		case len(e.Samples) == 0:
			return n, fmt.Errorf("history: run %s without samples (no measured repetition)", e.Run)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return n, s.wrap(err)
	}
	defer tx.Rollback()
	insert, err := tx.PrepareContext(ctx, `INSERT INTO samples (run, backend, configuration, metric, repetition, value) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`)
	if err != nil {
		return n, s.wrap(err)
	}
	defer insert.Close()
	for _, e := range entries {
		if err := s.addEntry(ctx, tx, insert, e, &n); err != nil {
			if errors.Is(err, ErrConflict) || errors.Is(err, ErrScenarioChanged) {
				return Added{}, err
			}
			return n, err
		}
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	if err := tx.Commit(); err != nil {
		return Added{}, fmt.Errorf("history %s: commit: %w", s.path, err)
	}
	return n, nil
}

// addEntry writes one run and its samples inside tx, counting into n.
func (s *Store) addEntry(ctx context.Context, tx *sql.Tx, insert *sql.Stmt, e Entry, n *Added) error {
	r := e.Run
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (commit_id, started_at, host, cpu_model, tool_version, source, added_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (commit_id, started_at, host) DO NOTHING`,
		r.Commit, formatTime(r.Time), r.Host, r.CPUModel, r.ToolVersion, r.Source, formatTime(time.Now()))
	if err != nil {
		return fmt.Errorf("history %s: add run %s: %w", s.path, r, err)
	}
	if k, err := res.RowsAffected(); err == nil && k == 1 {
		n.Runs++
	}
	var id int64
	if err := tx.QueryRowContext(ctx, "SELECT id FROM runs WHERE commit_id = ? AND started_at = ? AND host = ?",
		r.Commit, formatTime(r.Time), r.Host).Scan(&id); err != nil {
		return fmt.Errorf("history %s: run %s: %w", s.path, r, err)
	}
	if err := checkScenarios(ctx, tx, r, e.Scenarios); err != nil {
		return fmt.Errorf("run %s: %w", r, err)
	}
	for _, m := range e.Samples {
		res, err := insert.ExecContext(ctx, id, m.Backend, m.Configuration, m.Metric, m.Repetition, m.Value)
		if err != nil {
			return fmt.Errorf("history %s: add %s %s repetition %d: %w", s.path, m.Configuration, m.Metric, m.Repetition, err)
		}
		if k, err := res.RowsAffected(); err == nil && k == 1 {
			n.Samples++
			continue
		}
		var held float64
		if err := tx.QueryRowContext(ctx, "SELECT value FROM samples WHERE run = ? AND backend = ? AND configuration = ? AND metric = ? AND repetition = ?",
			id, m.Backend, m.Configuration, m.Metric, m.Repetition).Scan(&held); err != nil {
			return fmt.Errorf("history %s: %w", s.path, err)
		}
		if held != m.Value {
			return fmt.Errorf("run %s: configuration %s (%s) repetition %d: %s %v %w, which holds %v for it (another document of the same commit, start and host?)",
				r, m.Configuration, m.Backend, m.Repetition, m.Metric, m.Value, ErrConflict, held)
		}
		n.Known++
	}
	return nil
}

// Removed is a run taken out of the history and the number of its
// samples.
type Removed struct {
	Run
	Samples int
}

// RemoveRuns removes the runs with the keys (Commit, Time, Host) of runs,
// and every sample of theirs, in one transaction; it returns the ones
// that were there.
func (s *Store) RemoveRuns(ctx context.Context, runs []Run) ([]Removed, error) {
	return s.remove(ctx, func(tx *sql.Tx) ([]int64, error) {
		var ids []int64
		for _, r := range runs {
			var id int64
			err := tx.QueryRowContext(ctx, "SELECT id FROM runs WHERE commit_id = ? AND started_at = ? AND host = ?",
				r.Commit, formatTime(r.Time), r.Host).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, nil
	})
}

// ErrAmbiguous marks a commit prefix that names several commits.
var ErrAmbiguous = errors.New("names several commits")

// RemoveCommit removes every run of a commit, named in full or by a
// prefix that names one commit of the history, in one transaction; it
// returns the runs removed (none when no run has that commit).
func (s *Store) RemoveCommit(ctx context.Context, commit string) ([]Removed, error) {
	return s.remove(ctx, func(tx *sql.Tx) ([]int64, error) {
		rows, err := tx.QueryContext(ctx, "SELECT DISTINCT commit_id FROM runs WHERE substr(commit_id, 1, length(?1)) = ?1", commit)
		if err != nil {
			return nil, err
		}
		var commits []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return nil, err
			}
			commits = append(commits, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(commits) > 1 {
			return nil, fmt.Errorf("commit %s %w: %s", commit, ErrAmbiguous, strings.Join(commits, ", "))
		}
		if len(commits) == 0 {
			return nil, nil
		}
		ids, err := tx.QueryContext(ctx, "SELECT id FROM runs WHERE commit_id = ?", commits[0])
		if err != nil {
			return nil, err
		}
		defer ids.Close()
		var out []int64
		for ids.Next() {
			var id int64
			if err := ids.Scan(&id); err != nil {
				return nil, err
			}
			out = append(out, id)
		}
		return out, ids.Err()
	})
}

// remove deletes the runs whose ids pick returns, in one transaction.
func (s *Store) remove(ctx context.Context, pick func(*sql.Tx) ([]int64, error)) ([]Removed, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer tx.Rollback()
	ids, err := pick(tx)
	if err != nil {
		if errors.Is(err, ErrAmbiguous) {
			return nil, err
		}
		return nil, fmt.Errorf("history %s: %w", s.path, err)
	}
	var out []Removed
	for _, id := range ids {
		var r Removed
		var at string
		if err := tx.QueryRowContext(ctx, `SELECT commit_id, started_at, host, cpu_model, tool_version, source,
				(SELECT count(*) FROM samples WHERE run = ?1) FROM runs WHERE id = ?1`, id).
			Scan(&r.Commit, &at, &r.Host, &r.CPUModel, &r.ToolVersion, &r.Source, &r.Samples); err != nil {
			return nil, fmt.Errorf("history %s: %w", s.path, err)
		}
		if r.Time, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, fmt.Errorf("history %s: run time %q: %w", s.path, at, err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM runs WHERE id = ?", id); err != nil {
			return nil, fmt.Errorf("history %s: remove run %s: %w", s.path, r.Run, err)
		}
		out = append(out, r)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("history %s: commit: %w", s.path, err)
	}
	return out, nil
}

// Row is one sample with its run.
type Row struct {
	Run
	Sample
}

// Filter selects rows; empty fields select everything.
type Filter struct {
	Metric        string
	Configuration string
	Backend       string
}

// Rows returns the samples the filter selects, ordered by backend,
// configuration, metric, run time, commit, host and repetition.
func (s *Store) Rows(ctx context.Context, f Filter) ([]Row, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.commit_id, r.started_at, r.host, r.cpu_model, r.tool_version, r.source,
			m.backend, m.configuration, m.metric, m.repetition, m.value
		FROM samples m JOIN runs r ON r.id = m.run
		WHERE (?1 = '' OR m.metric = ?1) AND (?2 = '' OR m.configuration = ?2) AND (?3 = '' OR m.backend = ?3)
		ORDER BY m.backend, m.configuration, m.metric, r.started_at, r.commit_id, r.host, m.repetition`,
		f.Metric, f.Configuration, f.Backend)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var at string
		if err := rows.Scan(&r.Commit, &at, &r.Host, &r.CPUModel, &r.ToolVersion, &r.Source,
			&r.Backend, &r.Configuration, &r.Metric, &r.Repetition, &r.Value); err != nil {
			return nil, s.wrap(err)
		}
		if r.Time, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, fmt.Errorf("history %s: run time %q: %w", s.path, at, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	return out, nil
}

// Runs counts the runs stored.
func (s *Store) Runs(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&n); err != nil {
		return 0, s.wrap(err)
	}
	return n, nil
}

// Check runs SQLite's integrity check and the history's own: every run
// has samples (an Add stores both or neither).
func (s *Store) Check(ctx context.Context) error {
	var res string
	if err := s.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("history %s: integrity check: %w", s.path, err)
	}
	if res != "ok" {
		return fmt.Errorf("history %s: integrity check: %s", s.path, res)
	}
	var orphans int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM samples m WHERE m.run = r.id)").Scan(&orphans); err != nil {
		return fmt.Errorf("history %s: %w", s.path, err)
	}
	if orphans > 0 {
		return fmt.Errorf("history %s: %d runs without samples", s.path, orphans)
	}
	return nil
}

// formatTime writes a time so that text order is time order: UTC, fixed
// width nanoseconds.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z07:00") }
