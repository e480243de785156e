// Package store keeps a benchmark history in one SQLite file, through a
// pure-Go driver (modernc.org/sqlite: no cgo, no server). It stores rows;
// it does not know what a results document is (history/ingest turns one
// into rows) nor what a change point is (history/changepoint).
//
// # Layout
//
// runs: one row per run, keyed by (commit, time, host): the git commit the
// binary was built from, the run's start, the host's name; with the CPU
// model, the tool's version and the file it was first added from. A run
// is what one host ran from one start: a document, or one shard of a
// merged one.
//
// samples: one row per (run, backend, configuration, metric, repetition)
// with the repetition's value: the figures of measured repetitions, not
// aggregates, so that a reader can take medians and spreads itself.
//
// Add stores what the history lacks: a run already there gets only the
// samples it does not hold, so that adding a document twice, or a merged
// document and its shards in any order, stores each repetition once; a
// sample it holds with another value is refused (ErrConflict).
//
// # Files
//
// Open (writers: Add, RemoveRuns, RemoveCommit) creates a history only
// where there is no file, by writing it whole beside the path and linking
// it into place; an existing file must be a history of this layout
// (ErrNotHistory otherwise), and nothing is written into one that is not.
// OpenReadOnly (readers) opens the file read-only: it writes nothing and
// creates nothing beside it, so a read-only mount will do, and a reader
// of another user leaves no file the owner cannot write.
//
// # Transactions
//
// The file keeps SQLite's rollback journal (a history in WAL mode, as an
// older provebench wrote it, is converted by its next writer): readers
// need no -wal or -shm file, and a reader is kept out only while a
// writer commits (a writer keeps its pages in memory until then: no
// cache spill), waiting up to ReadBusyTimeout. An Add or a remove is one
// IMMEDIATE transaction: it takes the write lock before it reads, waits up
// to BusyTimeout for another writer, and either every row is stored or
// none is, also when the process is killed half-way (the journal rolls the
// file back when a writer next opens it).
package store
