package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// BusyTimeout is how long an Add waits for another process's write to
// finish before it fails.
const BusyTimeout = 60 * time.Second

// FileName is the history file's name in its default folder.
const FileName = "history.db"

// DefaultPath is the history file under a cache folder (provebench's key
// cache: ~/.cache/provebench/keys, or $PROVEBENCH_CACHE).
func DefaultPath(cacheDir string) string { return filepath.Join(cacheDir, FileName) }

// schemaVersion is the layout below, kept in SQLite's user_version.
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS runs (
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
CREATE TABLE IF NOT EXISTS samples (
	run           INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	backend       TEXT NOT NULL,
	configuration TEXT NOT NULL,
	metric        TEXT NOT NULL,
	repetition    INTEGER NOT NULL,
	value         REAL NOT NULL,
	PRIMARY KEY (run, backend, configuration, metric, repetition)
);
CREATE INDEX IF NOT EXISTS samples_series ON samples (metric, configuration, backend);
`

// Store is an open history file.
type Store struct {
	db   *sql.DB
	path string
}

// Open opens the history file at path, creating it (and its folder) when
// absent.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// migrate creates the tables, or checks that the file's layout is the one
// this code reads.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history %s: %w", s.path, err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("history %s: not a history file: %w", s.path, err)
	}
	switch v {
	case schemaVersion:
		return nil
	case 0:
	default:
		return fmt.Errorf("history %s: layout version %d, this provebench reads %d", s.path, v, schemaVersion)
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("history %s: create tables: %w", s.path, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("history %s: %w", s.path, err)
	}
	return tx.Commit()
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Path is the file's path.
func (s *Store) Path() string { return s.path }

// Run identifies one results document: the key (Commit, Time, Host) and
// what else the history shows about it.
type Run struct {
	Commit      string
	Time        time.Time
	Host        string
	CPUModel    string
	ToolVersion string
	// Source is the file the document was read from.
	Source string
}

// Sample is one measured repetition's value of a metric.
type Sample struct {
	Backend       string
	Configuration string
	Metric        string
	Repetition    int
	Value         float64
}

// ErrNoCommit is returned for a run without a commit: the history orders
// and names points by commit.
var ErrNoCommit = errors.New("no git commit recorded (build provebench from a git checkout: make build)")

// Add stores a run and its samples in one transaction. It returns false,
// storing nothing, when a run of the same commit, time and host is there
// already.
func (s *Store) Add(ctx context.Context, run Run, samples []Sample) (bool, error) {
	return s.add(ctx, run, samples, nil)
}

// add is Add with a hook called inside the transaction once every row is
// written, before the commit (tests kill the process there).
func (s *Store) add(ctx context.Context, run Run, samples []Sample, beforeCommit func()) (bool, error) {
	if run.Commit == "" {
		return false, ErrNoCommit
	}
	if len(samples) == 0 {
		return false, errors.New("history: a run without samples (no measured repetition)")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("history %s: %w", s.path, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (commit_id, started_at, host, cpu_model, tool_version, source, added_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (commit_id, started_at, host) DO NOTHING`,
		run.Commit, formatTime(run.Time), run.Host, run.CPUModel, run.ToolVersion, run.Source, formatTime(time.Now()))
	if err != nil {
		return false, fmt.Errorf("history %s: add run: %w", s.path, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return false, fmt.Errorf("history %s: %w", s.path, err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO samples (run, backend, configuration, metric, repetition, value) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return false, fmt.Errorf("history %s: %w", s.path, err)
	}
	defer stmt.Close()
	for _, m := range samples {
		if _, err := stmt.ExecContext(ctx, id, m.Backend, m.Configuration, m.Metric, m.Repetition, m.Value); err != nil {
			return false, fmt.Errorf("history %s: add %s %s repetition %d: %w", s.path, m.Configuration, m.Metric, m.Repetition, err)
		}
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("history %s: commit: %w", s.path, err)
	}
	return true, nil
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
		return nil, fmt.Errorf("history %s: %w", s.path, err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var at string
		if err := rows.Scan(&r.Commit, &at, &r.Host, &r.CPUModel, &r.ToolVersion, &r.Source,
			&r.Backend, &r.Configuration, &r.Metric, &r.Repetition, &r.Value); err != nil {
			return nil, fmt.Errorf("history %s: %w", s.path, err)
		}
		if r.Time, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, fmt.Errorf("history %s: run time %q: %w", s.path, at, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %w", s.path, err)
	}
	return out, nil
}

// Runs counts the runs stored.
func (s *Store) Runs(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&n)
	return n, err
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
