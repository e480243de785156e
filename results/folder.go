package results

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// An output folder holds what every command that writes a results
// document (run, merge, simulate, ab's two sides) leaves there, written by
// Folder so that the set is the same whoever wrote it:
//
//	results.json.gz   the document (results.json with FormatJSON; the
//	                  other format's document is removed, since Find
//	                  refuses a folder holding both)
//	results.csv       one row per repetition (WriteCSV)
//	results.bench     the Go benchmark format, for benchstat (WriteBenchfmt)
//	.provebench-files the files the commands wrote there, one relative
//	                  path a line: what run --overwrite clears, and
//	                  nothing else
//
// A simulated document's CSV rows and benchmark lines say that they are
// predictions (WriteCSV, WriteBenchfmt).
const (
	CSVName      = "results.csv"
	BenchfmtName = "results.bench"
	ManifestName = ".provebench-files"
)

// FolderNames are the names of an output folder's results files: the
// document in every format, the CSV and the benchmark lines (not the
// manifest).
func FolderNames() []string { return append(DocumentNames(), CSVName, BenchfmtName) }

// Folder is an output folder a results document is written into.
type Folder struct {
	Dir string
	// Format is the document's storage format; "" means FormatGzip.
	Format Format
}

func (f Folder) format() Format {
	if f.Format == "" {
		return FormatGzip
	}
	return f.Format
}

// DocumentPath is where the folder's document is written.
func (f Folder) DocumentPath() string { return filepath.Join(f.Dir, f.format().FileName()) }

// SaveDocument writes the document alone, atomically, and removes the
// document of the other format an earlier command left: what a command
// that keeps its document up to date while it works calls after each step
// (run, after every repetition). Write finishes the folder.
func (f Folder) SaveDocument(doc *Run) error {
	if err := WriteFormat(f.DocumentPath(), doc, f.format()); err != nil {
		return err
	}
	return RemoveOthers(f.Dir, f.format())
}

// WriteTables writes results.csv and results.bench from the document,
// each atomically, and returns their paths: for a command whose document
// is already saved (SaveDocument).
func (f Folder) WriteTables(doc *Run) ([]string, error) {
	var written []string
	for _, t := range []struct {
		name  string
		write func(string, *Run) error
	}{{CSVName, WriteCSVFile}, {BenchfmtName, WriteBenchfmtFile}} {
		p := filepath.Join(f.Dir, t.name)
		if err := t.write(p, doc); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}

// Write writes the folder's results files: the document (SaveDocument),
// then results.csv and results.bench. It returns the paths written, the
// document first.
func (f Folder) Write(doc *Run) ([]string, error) {
	if err := f.SaveDocument(doc); err != nil {
		return nil, err
	}
	written, err := f.WriteTables(doc)
	return append([]string{f.DocumentPath()}, written...), err
}

// Manifest lists the files the folder's manifest records, as paths
// relative to it; an entry that would leave the folder (absolute, or
// through "..") is dropped, so that nothing outside is ever cleared. A
// folder without a manifest lists none.
func (f Folder) Manifest() ([]string, error) {
	data, err := os.ReadFile(filepath.Join(f.Dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		name := strings.TrimSpace(line)
		if name != "" && filepath.IsLocal(name) {
			names = append(names, filepath.FromSlash(name))
		}
	}
	return names, nil
}

// WriteManifest records in the folder's manifest the files of written
// (paths as the command wrote them) that lie inside the folder, beside
// the entries an earlier command recorded whose files are still there: a
// merge or simulate into a folder another command wrote leaves every file
// either wrote listed, for run --overwrite to clear.
func (f Folder) WriteManifest(written []string) error {
	names, err := f.Manifest()
	if err != nil {
		return fmt.Errorf("%s: %w", ManifestName, err)
	}
	names = slices.DeleteFunc(names, func(name string) bool {
		_, err := os.Lstat(filepath.Join(f.Dir, name))
		return err != nil
	})
	for _, p := range written {
		rel, err := filepath.Rel(f.Dir, p)
		if err != nil || !filepath.IsLocal(rel) {
			continue // the calibration cache, say
		}
		if !slices.Contains(names, rel) {
			names = append(names, rel)
		}
	}
	var b strings.Builder
	for _, name := range names {
		b.WriteString(filepath.ToSlash(name) + "\n")
	}
	return WriteFile(filepath.Join(f.Dir, ManifestName), []byte(b.String()))
}

// WriteManifestOrWarn is WriteManifest for a command whose results are
// whole without it: a failure is a warning on warn, saying what it costs.
func (f Folder) WriteManifestOrWarn(written []string, warn io.Writer) {
	if err := f.WriteManifest(written); err != nil {
		fmt.Fprintf(warn, "warning: %v (a later --overwrite clears only the fixed names)\n", err)
	}
}
