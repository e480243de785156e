// Package store keeps a benchmark history in one SQLite file, through a
// pure-Go driver (modernc.org/sqlite: no cgo, no server). It stores rows;
// it does not know what a results document is (history/ingest turns one
// into rows) nor what a change point is (history/changepoint).
//
// # Layout
//
// runs: one row per results document added, keyed by (commit, time, host):
// the git commit the binary was built from, the run's start, the host's
// name; with the CPU model, the tool's version and the file it came from.
// Adding a document whose key is already there adds nothing, so a nightly
// job may add the same file twice.
//
// samples: one row per (run, backend, configuration, metric, repetition)
// with the repetition's value: the figures of measured repetitions, not
// aggregates, so that a reader can take medians and spreads itself.
//
// # Transactions
//
// An Add is one IMMEDIATE transaction: it takes the write lock before it
// reads, waits up to BusyTimeout for another writer, and either every row
// of the document is stored or none is, also when the process is killed
// half-way: the file is in WAL mode, where the frames of a transaction
// that never committed are never read and are dropped when the file is
// next opened. Readers do not block the writer.
package store
