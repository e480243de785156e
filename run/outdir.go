package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrOutDir marks an output directory that cannot be used: not creatable,
// not writable, or in use by another run. It is bad input, found before
// any work.
var ErrOutDir = errors.New("output directory unusable")

// lockName is the lock file a run holds in its output directory.
const lockName = ".provebench.lock"

// LockOutDir creates dir if needed, checks it can be written, and takes an
// exclusive lock on it for the caller's run: a second run into the same
// directory would overwrite this one's results.json and CSV while its plots
// stayed beside them. The lock is an flock on dir/.provebench.lock, so the
// kernel drops it when the process dies, however it dies. unlock releases
// it.
func LockOutDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOutDir, err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not writable: %w", ErrOutDir, dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is in use by another provebench run (pid %s); wait for it or choose another -o",
				ErrOutDir, dir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("%w: lock %s: %w", ErrOutDir, path, err)
	}
	// The holder's pid, for the message above; a write that fails here
	// means the directory is not writable after all.
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: %s is not writable: %w", ErrOutDir, dir, err)
		}
	}
	return func() { f.Close() }, nil
}

// ManifestName lists, one relative path a line, the files a run wrote into
// its output directory: what --overwrite clears, and nothing else.
const ManifestName = ".provebench-files"

// ErrFinished marks an output directory that holds a previous run's
// results: a run into it would mix its files with the old ones.
var ErrFinished = errors.New("holds the results of a previous run")

// ownFixed are the files every run writes, cleared by --overwrite even
// where a run died before writing its manifest.
var ownFixed = []string{ResultsFile, "results.csv", "results.bench", "report.md", "report.html"}

// CheckFinished refuses an output directory that holds a previous run's
// results (its results.json or its manifest).
func CheckFinished(dir string) error {
	for _, name := range []string{ResultsFile, ManifestName} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%w: %s %w (%s); choose another -o, or --overwrite to replace it", ErrOutDir, dir, ErrFinished, name)
		}
	}
	return nil
}

// ClearOutDir removes what a previous run wrote into dir: the files its
// manifest lists and the files every run writes, each only where it lies
// inside dir. Anything else in dir (a user's notes, another tool's files)
// stays.
func ClearOutDir(dir string) error {
	names := slices.Clone(ownFixed)
	if data, err := os.ReadFile(filepath.Join(dir, ManifestName)); err == nil {
		names = append(names, strings.Split(string(data), "\n")...)
	}
	var errs []error
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" || filepath.IsAbs(name) || !filepath.IsLocal(name) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(filepath.Join(dir, ManifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: clear %s: %w", ErrOutDir, dir, err)
	}
	return nil
}

// WriteManifest records the files of written that lie inside dir, for a
// later --overwrite.
func WriteManifest(dir string, written []string) error {
	var b strings.Builder
	for _, p := range written {
		rel, err := filepath.Rel(dir, p)
		if err != nil || !filepath.IsLocal(rel) {
			continue // the calibration cache, say
		}
		b.WriteString(filepath.ToSlash(rel) + "\n")
	}
	return os.WriteFile(filepath.Join(dir, ManifestName), []byte(b.String()), 0o644)
}
