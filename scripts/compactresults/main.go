// Command compactresults rewrites results documents as compact gzip of the
// current schema (results.json.gz), the figures unchanged: each document
// is read with the results package's reader (any schema it reads, plain or
// compressed), written back in results.FormatGzip beside it, and a plain
// file removed. A directory argument is walked for results.json and
// results.json.gz files. A document already in its final form is left
// alone, so running it twice changes nothing. Used by
// scripts/docs-results.sh (make docs-results).
//
//	go run ./scripts/compactresults docs/results
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/provebench/provebench/results"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: compactresults DIR|FILE...")
		os.Exit(2)
	}
	var errs []error
	for _, arg := range os.Args[1:] {
		errs = append(errs, walk(arg))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "compactresults:", err)
		os.Exit(1)
	}
}

// walk compacts every results.json under root (root itself when a file).
func walk(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || (path != root && d.Name() != results.FormatJSON.FileName() && d.Name() != results.FormatGzip.FileName()) {
			return nil
		}
		return compact(path)
	})
}

// compact writes path's document as gzip beside it (its name with .gz, a
// results.json becoming results.json.gz) and removes path.
func compact(path string) error {
	doc, err := results.Read(path)
	if err != nil {
		return err
	}
	out := path
	if !strings.HasSuffix(out, ".gz") {
		out += ".gz"
	}
	before, err := os.Stat(path)
	if err != nil {
		return err
	}
	data, err := results.Encode(doc, results.FormatGzip)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(out); err == nil && bytes.Equal(old, data) {
		return nil // already compact, in the current schema
	}
	if err := results.WriteFile(out, data); err != nil {
		return err
	}
	if out != path {
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	after, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d -> %d bytes (schema %d, gzip)\n", out, before.Size(), after.Size(), results.SchemaVersion)
	return nil
}
