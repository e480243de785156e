package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/provebench/provebench/results"
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

// ErrFinished marks an output directory that holds a previous run's
// results: a run into it would mix its files with the old ones.
var ErrFinished = errors.New("holds the results of a previous run")

// ownFixed are the files every run writes, cleared by --overwrite even
// where a run died before writing its manifest: the results files of an
// output folder (results.FolderNames) and the report's documents.
func ownFixed() []string { return append(results.FolderNames(), "report.md", "report.html") }

// CheckFinished refuses an output directory that holds a previous
// command's results: a results document in either format, or the
// manifest of the files a command wrote there (results.ManifestName).
func CheckFinished(dir string) error {
	for _, name := range append(results.DocumentNames(), results.ManifestName) {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%w: %s %w (%s); choose another -o, or --overwrite to replace it", ErrOutDir, dir, ErrFinished, name)
		}
	}
	return nil
}

// ClearOutDir removes what previous commands wrote into dir: the files its
// manifest lists and the files every run writes, each only where it lies
// inside dir. Anything else in dir (a user's notes, another tool's files)
// stays.
func ClearOutDir(dir string) error {
	listed, err := results.Folder{Dir: dir}.Manifest()
	if err != nil {
		return fmt.Errorf("%w: clear %s: %w", ErrOutDir, dir, err)
	}
	var errs []error
	for _, name := range append(ownFixed(), listed...) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(filepath.Join(dir, results.ManifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: clear %s: %w", ErrOutDir, dir, err)
	}
	return nil
}
