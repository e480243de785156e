package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/provebench/provebench/history/store"
	"github.com/provebench/provebench/results"
)

// Metrics are the figures the history keeps of every measured
// repetition: the metric table's Tracked ones (results.Metrics), by the
// names results documents and compare use, each bounded by its Max.
func Metrics() []results.Metric { return results.MetricsFor(results.Tracked) }

// Lookup returns the kept metric of that name.
func Lookup(name string) (results.Metric, bool) {
	m, ok := results.MetricNamed(name)
	if !ok || !m.In(results.Tracked) {
		return results.Metric{}, false
	}
	return m, true
}

// Document is one results document as history rows: one entry per run it
// holds, a run being what one host ran from one start. A document run as
// one holds one; a merged document one per shard, each with the shard's
// own start and host, so that a merged document and its shards are the
// same runs, added in any order.
type Document struct {
	Source  string
	Entries []store.Entry
}

// Samples counts the document's samples.
func (d Document) Samples() int {
	n := 0
	for _, e := range d.Entries {
		n += len(e.Samples)
	}
	return n
}

// Runs are the document's runs.
func (d Document) Runs() []store.Run {
	var out []store.Run
	for _, e := range d.Entries {
		out = append(out, e.Run)
	}
	return out
}

// FromRun extracts a results document's rows. source names the file.
// Refused, with the reason: simulated documents (they predict, they do
// not measure), documents without a git commit or a start time, a
// repetition index that appears twice in a configuration, and a figure
// outside its metric's bounds.
func FromRun(doc *results.Run, source string) (Document, error) {
	if doc.Simulated != nil {
		return Document{}, fmt.Errorf("%s: a simulated document holds predictions, not measurements", source)
	}
	out := Document{Source: source}
	byRun := map[runKey]int{} // index in out.Entries
	seen := map[repKey]bool{}
	for i := range doc.Scenarios {
		sc := &doc.Scenarios[i]
		run, err := runOf(doc, i, source)
		if err != nil {
			return Document{}, err
		}
		k := runKey{run.Commit, run.Time.UnixNano(), run.Host}
		e, ok := byRun[k]
		if !ok {
			e = len(out.Entries)
			byRun[k] = e
			out.Entries = append(out.Entries, store.Entry{Run: run})
		}
		if fp, ok := fingerprint(sc.Spec); ok {
			out.Entries[e].Scenarios = append(out.Entries[e].Scenarios, store.Scenario{Backend: sc.Backend, Configuration: sc.Name, Fingerprint: fp})
		}
		for j := range sc.Repetitions {
			r := &sc.Repetitions[j]
			if !r.Measured() {
				continue
			}
			rk := repKey{k, sc.Backend, sc.Name, r.Index}
			if seen[rk] {
				return Document{}, fmt.Errorf("%s: scenarios[%d] (configuration %s, backend %s): repetition index %d appears twice among the measured repetitions",
					source, i, sc.Name, sc.Backend, r.Index)
			}
			seen[rk] = true
			for _, m := range Metrics() {
				v, ok := m.Value(r)
				if !ok {
					continue
				}
				if err := m.Check(v); err != nil {
					return Document{}, fmt.Errorf("%s: scenarios[%d].repetitions[%d] (configuration %s, repetition %d): %w", source, i, j, sc.Name, r.Index, err)
				}
				out.Entries[e].Samples = append(out.Entries[e].Samples, store.Sample{
					Backend: sc.Backend, Configuration: sc.Name, Metric: m.Name, Repetition: r.Index, Value: v,
				})
			}
		}
	}
	out.Entries = slices.DeleteFunc(out.Entries, func(e store.Entry) bool { return len(e.Samples) == 0 })
	if len(out.Entries) == 0 {
		return Document{}, fmt.Errorf("%s: no measured repetition to add", source)
	}
	return out, nil
}

type runKey struct {
	commit string
	start  int64
	host   string
}

type repKey struct {
	run             runKey
	backend, config string
	index           int
}

// runOf is the run that measured scenario i: its shard's in a merged
// document (start, host, commit), else the document's. Its start is the
// run's started_at, or where that is absent the earliest start of the
// scenarios' repetitions in the same run.
func runOf(doc *results.Run, i int, source string) (store.Run, error) {
	start, env := doc.StartedAt, &doc.Environment
	if k := doc.Scenarios[i].Shard; k > 0 {
		j := slices.IndexFunc(doc.Shards, func(s results.ShardRun) bool { return s.Index == k })
		if j < 0 {
			return store.Run{}, fmt.Errorf("%s: scenarios[%d] (configuration %s) names shard %d, which shards does not hold", source, i, doc.Scenarios[i].Name, k)
		}
		start, env = doc.Shards[j].StartedAt, &doc.Shards[j].Environment
	}
	if env.GitCommit == "" {
		return store.Run{}, fmt.Errorf("%s: %w", source, store.ErrNoCommit)
	}
	if start.IsZero() {
		start = earliestRepetition(doc, doc.Scenarios[i].Shard)
	}
	if start.IsZero() {
		return store.Run{}, fmt.Errorf("%s: %w, nor a start of any repetition: the history orders runs by their start", source, store.ErrNoTime)
	}
	return store.Run{Commit: env.GitCommit, Time: start, Host: env.Hostname, CPUModel: env.CPUModel,
		ToolVersion: doc.ToolVersion, Source: source}, nil
}

// earliestRepetition is the earliest repetition start of the scenarios
// run by shard (0: the document's own).
func earliestRepetition(doc *results.Run, shard int) time.Time {
	var first time.Time
	for _, sc := range doc.Scenarios {
		if sc.Shard != shard {
			continue
		}
		for _, r := range sc.Repetitions {
			if !r.StartedAt.IsZero() && (first.IsZero() || r.StartedAt.Before(first)) {
				first = r.StartedAt
			}
		}
	}
	return first
}

// Keys are the runs a results document holds, without its samples: what
// `history remove` takes out for it. Its figures are not checked, so that
// a document add would now refuse can still be taken out.
func Keys(doc *results.Run, source string) ([]store.Run, error) {
	var out []store.Run
	seen := map[runKey]bool{}
	for i := range doc.Scenarios {
		run, err := runOf(doc, i, source)
		if err != nil {
			return nil, err
		}
		if k := (runKey{run.Commit, run.Time.UnixNano(), run.Host}); !seen[k] {
			seen[k] = true
			out = append(out, run)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no configuration, no run", source)
	}
	return out, nil
}

// Read reads a results document (plain or gzip) and extracts its rows.
func Read(path string) (Document, error) {
	doc, err := results.Read(path)
	if err != nil {
		return Document{}, err
	}
	return FromRun(doc, path)
}

// Outside is a stored value outside its metric's bounds: a history from
// before add checked them.
type Outside struct {
	store.Row
	Err error
}

// Sane splits rows into those within their metric's bounds and those
// outside (rows of a metric this provebench does not know are kept).
func Sane(rows []store.Row) (kept []store.Row, outside []Outside) {
	kept = rows[:0:0]
	for _, r := range rows {
		m, ok := Lookup(r.Metric)
		if !ok {
			kept = append(kept, r)
			continue
		}
		if err := m.Check(r.Value); err != nil {
			outside = append(outside, Outside{r, err})
			continue
		}
		kept = append(kept, r)
	}
	return kept, outside
}

// measuredSettings are the spec's fields that decide what a repetition
// measures; the others (its name and file, repeats, warm-ups, sampling,
// limits, verification) do not move a figure of a repetition that
// finished, and change without making another scenario.
var measuredSettings = []string{"workload", "pipeline", "backend", "devices", "key", "measure", "exec"}

// fingerprint is a hash of the spec's measured settings, as recorded; ok
// is false for a document without a spec (an old one): nothing to check.
func fingerprint(spec json.RawMessage) (string, bool) {
	var all map[string]any // decoded whole: maps marshal with sorted keys, so the same settings give the same bytes however written
	if len(spec) == 0 || json.Unmarshal(spec, &all) != nil {
		return "", false
	}
	kept := map[string]any{}
	for _, k := range measuredSettings {
		if v, ok := all[k]; ok {
			kept[k] = v
		}
	}
	data, err := json.Marshal(kept)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]), true
}
