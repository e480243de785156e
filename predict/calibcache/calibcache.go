// Package calibcache keeps the results documents of this host's recent
// runs, per backend, so that run's pre-flight check can calibrate the
// simulator on them without being told which files to read.
//
// Layout, under the directory Dir returns (beside the proving keys):
//
//	<host>/<backend>/<started>-v<schema>-s<set>-<hash>.json.gz
//
// <host> names the host as a results document's environment does
// (hostname, CPU model and memory: HostKey), <started> is the run's start
// in UTC, so that names sort oldest first, <schema> the results schema
// the document was written in: a reader of another schema skips it without
// opening it, and <set> a fingerprint of its configurations' names (names
// without it, from earlier versions, count as one set). Each document is the run's own, less the scenarios a
// calibration cannot use (exec drivers, other backends, none measured) and
// its shard record.
// Documents are stored compressed (results.FormatGzip); plain .json ones
// written by earlier versions are read alike. The newest Keep documents of
// a host and backend are kept, and beside them the newest of up to Keep
// other sets of configurations: nine small runs of one file do not push
// out the quickstart's calibration (issue 41), and the cache stays within
// twice Keep documents.
package calibcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/provebench/provebench/results"
)

// Keep is how many documents a cache keeps per host and backend by
// default: enough sizes for a calibration, few enough that a sweep's
// multi-megabyte series do not pile up.
const Keep = 8

// Cache is a calibration cache rooted at Dir.
type Cache struct {
	Dir string
	// Keep is how many documents to keep per host and backend (Keep when
	// 0).
	Keep int
}

// Dir is the calibration cache beside a proving key cache.
func Dir(keyCache string) string { return filepath.Join(keyCache, "calibration") }

// HostKey names a host in the cache: its hostname, made safe for a path,
// and a hash of the hostname, CPU model and memory, which tell hosts of
// the same name apart.
func HostKey(env results.Environment) string {
	sum := sha256.Sum256([]byte(env.Hostname + "\x00" + env.CPUModel + "\x00" + strconv.FormatUint(env.MemoryBytes, 10)))
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, env.Hostname)
	// A leading dot would hide the folder, and "." or ".." is no name.
	if name = strings.TrimLeft(name, "."); name == "" {
		name = "host"
	}
	return name + "-" + hex.EncodeToString(sum[:4])
}

func (c Cache) keep() int {
	if c.Keep > 0 {
		return c.Keep
	}
	return Keep
}

// dir is the folder of a host's documents of one backend.
func (c Cache) dir(env results.Environment, backend string) (string, error) {
	if backend == "" || backend != filepath.Base(backend) || strings.HasPrefix(backend, ".") {
		return "", fmt.Errorf("calibration cache: backend %q is not a name", backend)
	}
	return filepath.Join(c.Dir, HostKey(env), backend), nil
}

// StoreOrWarn is Store for a run that does not depend on the cache: a failure
// is a warning on warn, and the files written so far are returned.
func (c Cache) StoreOrWarn(doc *results.Run, warn io.Writer) []string {
	written, err := c.Store(doc)
	if err != nil {
		fmt.Fprintf(warn, "warning: %v\n", err)
	}
	return written
}

// Store keeps a copy of a run's results for each backend it measured and
// prunes the older documents of those backends; it returns the files it
// wrote. A simulated or merged document (several hosts) is not stored,
// nor a run without a measured repetition of the built-in pipeline.
func (c Cache) Store(doc *results.Run) ([]string, error) {
	if doc.Simulated != nil || len(doc.Shards) > 0 {
		return nil, nil
	}
	byBackend := map[string][]results.Scenario{}
	var backends []string
	for _, sc := range doc.Scenarios {
		if !usable(&sc) {
			continue
		}
		if _, ok := byBackend[sc.Backend]; !ok {
			backends = append(backends, sc.Backend)
		}
		byBackend[sc.Backend] = append(byBackend[sc.Backend], sc)
	}
	var written []string
	var errs []error
	for _, b := range backends {
		one := *doc
		one.Scenarios = byBackend[b]
		// A shard's positions index its scenarios, which this copy may
		// have fewer of; a calibration does not read them.
		one.Shard = nil
		p, err := c.store(&one, b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		written = append(written, p)
		if err := c.prune(filepath.Dir(p)); err != nil {
			errs = append(errs, err)
		}
	}
	return written, errors.Join(errs...)
}

// usable reports whether a calibration reads the scenario: the built-in
// pipeline, with at least one measured repetition.
func usable(sc *results.Scenario) bool {
	if sc.Driver != "" {
		return false
	}
	return slices.ContainsFunc(sc.Repetitions, func(r results.Repetition) bool { return r.Measured() })
}

// store writes one backend's document atomically.
func (c Cache) store(doc *results.Run, backend string) (string, error) {
	dir, err := c.dir(doc.Environment, backend)
	if err != nil {
		return "", err
	}
	data, err := results.Encode(doc, results.FormatGzip)
	if err != nil {
		return "", fmt.Errorf("calibration cache: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("calibration cache: %w", err)
	}
	sum := sha256.Sum256(data)
	name := fmt.Sprintf("%s-v%d-s%s-%s.json.gz", doc.StartedAt.UTC().Format("20060102T150405Z"), doc.Schema, setOf(doc), hex.EncodeToString(sum[:4]))
	p := filepath.Join(dir, name)
	if err := results.WriteFile(p, data); err != nil {
		return "", fmt.Errorf("calibration cache: %w", err)
	}
	return p, nil
}

// documents lists a folder's documents, oldest first (their names start
// with the run's start time).
func documents(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		// Hidden names are atomic writes in progress.
		n := e.Name()
		if e.Type().IsRegular() && (strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz")) && !strings.HasPrefix(n, ".") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// setOf fingerprints a document's set of configurations: their names,
// sorted.
func setOf(doc *results.Run) string {
	names := make([]string, 0, len(doc.Scenarios))
	for _, sc := range doc.Scenarios {
		names = append(names, sc.Name)
	}
	slices.Sort(names)
	sum := sha256.Sum256([]byte(strings.Join(names, "\x00")))
	return hex.EncodeToString(sum[:4])
}

// setOfName reads the set fingerprint from a document's name; "" for a
// name without one.
func setOfName(name string) string {
	parts := strings.Split(name, "-")
	if len(parts) < 4 || !strings.HasPrefix(parts[2], "s") {
		return ""
	}
	return parts[2][1:]
}

// pruned lists, of a folder's documents oldest first, those prune
// deletes: all but the newest keep, and the newest of up to keep other
// sets of configurations.
func pruned(names []string, keep int) []string {
	kept := make(map[string]bool, 2*keep)
	sets := map[string]bool{}
	for _, n := range names[max(len(names)-keep, 0):] {
		kept[n], sets[setOfName(n)] = true, true
	}
	for i, extra := len(names)-1, 0; i >= 0 && extra < keep; i-- {
		if set := setOfName(names[i]); !sets[set] {
			kept[names[i]], sets[set] = true, true
			extra++
		}
	}
	var out []string
	for _, n := range names {
		if !kept[n] {
			out = append(out, n)
		}
	}
	return out
}

// prune deletes what pruned lists.
func (c Cache) prune(dir string) error {
	names, err := documents(dir)
	if err != nil {
		return fmt.Errorf("calibration cache: %w", err)
	}
	var errs []error
	for _, n := range pruned(names, c.keep()) {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("calibration cache: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Files lists the documents of a host and backend that this provebench's
// results schema reads, oldest first; none (and no error) when the cache
// has none.
func (c Cache) Files(env results.Environment, backend string) ([]string, error) {
	dir, err := c.dir(env, backend)
	if err != nil {
		return nil, err
	}
	names, err := documents(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("calibration cache: %w", err)
	}
	var files []string
	for _, n := range names {
		if results.ReadsSchema(schemaOf(n)) {
			files = append(files, filepath.Join(dir, n))
		}
	}
	return files, nil
}

// schemaOf reads the schema version from a document's name
// (<started>-v<schema>-[s<set>-]<hash>.json[.gz]); 0 when it has none.
func schemaOf(name string) int {
	parts := strings.Split(name, "-")
	if len(parts) < 3 || !strings.HasPrefix(parts[1], "v") {
		return 0
	}
	v, err := strconv.Atoi(parts[1][1:])
	if err != nil {
		return 0
	}
	return v
}

// Backends lists the backends a host has documents of, by name.
func (c Cache) Backends(env results.Environment) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(c.Dir, HostKey(env)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("calibration cache: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
