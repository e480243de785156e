package results

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Format is how a results document is stored on disk. Readers do not need
// to be told: Decode recognises a gzip stream by its magic bytes, whatever
// the file is called.
type Format string

// Storage formats.
const (
	// FormatGzip is compact JSON (no indentation) in a gzip stream, the
	// default: with the delta-encoded series of schema 2, a sampled row
	// (one instant of every series) costs a small fraction of what it
	// costs indented with the columns as values (docs/reference.md, "The
	// output folder", has the figures).
	FormatGzip Format = "json.gz"
	// FormatJSON is indented JSON, for reading with a text editor.
	FormatJSON Format = "json"
)

// Formats lists the storage formats, the default first.
var Formats = []Format{FormatGzip, FormatJSON}

// ParseFormat reads a --results-format value: "json.gz" (or "gzip") and
// "json".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "json.gz", "gzip", "gz":
		return FormatGzip, nil
	case "json":
		return FormatJSON, nil
	}
	return "", fmt.Errorf("results format %q: want json.gz or json", s)
}

// FileName is the results document's name in an output directory:
// results.json.gz or results.json.
func (f Format) FileName() string { return "results." + string(f) }

// FormatOf is the format a path's name asks for: gzip for a name ending in
// .gz, indented JSON otherwise.
func FormatOf(path string) Format {
	if strings.HasSuffix(path, ".gz") {
		return FormatGzip
	}
	return FormatJSON
}

// Encode serialises the run in a format, as a document of the current
// schema (a schema-1 document read and written again becomes schema 2).
func Encode(r *Run, f Format) ([]byte, error) {
	if r.Schema != SchemaVersion {
		c := *r
		c.Schema = SchemaVersion
		r = &c
	}
	switch f {
	case FormatJSON:
		data, err := json.MarshalIndent(r, "", " ")
		if err != nil {
			return nil, fmt.Errorf("encode results: %w", err)
		}
		return append(data, '\n'), nil
	case FormatGzip:
		data, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("encode results: %w", err)
		}
		return Compress(data)
	}
	return nil, fmt.Errorf("encode results: unknown format %q", f)
}

// Compress wraps data in a gzip stream at the best compression: documents
// are written once and read many times, so the best level's extra time is
// paid once.
func Compress(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, fmt.Errorf("compress results: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress results: %w", err)
	}
	return b.Bytes(), nil
}

// WriteFormat writes the run to path atomically in the given format.
func WriteFormat(path string, r *Run, f Format) error {
	data, err := Encode(r, f)
	if err != nil {
		return err
	}
	return WriteFile(path, data)
}

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// IsGzip reports whether data starts a gzip stream.
func IsGzip(data []byte) bool { return bytes.HasPrefix(data, gzipMagic) }

// RemoveOthers removes the results documents of dir in formats other than
// keep, so that a directory rewritten in another format does not keep a
// stale document beside the new one (Find refuses a folder with both).
func RemoveOthers(dir string, keep Format) error {
	var errs []error
	for _, f := range Formats {
		if f == keep {
			continue
		}
		if err := os.Remove(filepath.Join(dir, f.FileName())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
