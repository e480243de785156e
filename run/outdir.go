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

	"github.com/provebench/provebench/internal/fsname"
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
	// O_NOFOLLOW: a lock file that is a symbolic link (planted, or left by
	// another tool) would have the pid written through it, outside dir.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%w: %s is a symbolic link: provebench writes only files of its own inside -o", ErrOutDir, path)
	}
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
// stays. Names are resolved beneath dir (os.Root: openat, component by
// component): a listed name that leads out of dir through a symbolic link
// is refused, naming it, before anything is removed; a name that
// lies outside dir as written (../x, /x) is no file of the run and is
// left alone. A listed name that is itself a symbolic link is removed as
// the link.
func ClearOutDir(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("%w: clear %s: %w", ErrOutDir, dir, err)
	}
	defer root.Close()
	names := ownFixed()
	data, err := root.ReadFile(results.ManifestName)
	if err == nil {
		names = append(names, strings.Split(string(data), "\n")...)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: clear %s: %w", ErrOutDir, dir, fsname.RootPath(dir, err))
	}
	var remove []string
	var errs []error
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" || filepath.IsAbs(name) || !filepath.IsLocal(name) {
			continue
		}
		// Lstat resolves every folder of the name beneath dir, and not
		// the name itself: a link is what would be removed.
		if _, err := root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			errs = append(errs, fsname.RootPath(dir, err))
			continue
		}
		remove = append(remove, name)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: clear %s: nothing removed: %w", ErrOutDir, dir, err)
	}
	for _, name := range append(remove, results.ManifestName) {
		if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fsname.RootPath(dir, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: clear %s: %w", ErrOutDir, dir, err)
	}
	return nil
}
