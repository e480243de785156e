// Package ingest turns a results document into history rows: the run's
// key (the git commit the binary was built from, the run's start, the
// host) and one sample per measured repetition and metric. It is the one
// place of the history that knows the results schema.
package ingest
