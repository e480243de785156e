// Package ingest turns a results document into history rows: its runs,
// each keyed by the git commit the binary was built from, the run's start
// and the host (a merged document holds one run per shard, with the
// shard's start and host, so that it and its shards are the same runs),
// and one sample per measured repetition and metric. It is the one place
// of the history that knows the results schema; which figures it keeps
// and what a sane figure of each is come from the metric table
// (results.Metrics, its Tracked metrics and their Max): a document with a
// figure beyond its metric's bounds, or a repetition index twice in a
// configuration, is refused whole.
package ingest
