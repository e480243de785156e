// Package version describes the running binary: its module version and the
// git commit it was built from, as the Go toolchain recorded them
// (runtime/debug.ReadBuildInfo; `make build` passes -buildvcs).
package version

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// Info is what the build recorded about the binary.
type Info struct {
	Module   string // the main module's version, "(devel)" for a local build
	Commit   string // vcs.revision; empty when the build had no VCS data
	Modified bool   // vcs.modified: the tree had uncommitted changes
	Go       string // the toolchain's version
}

// Read returns the build's information; fields the build did not record
// are empty.
func Read() Info {
	info := Info{Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	info.Module = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// Short is the module version and commit, as results.json's tool_version
// records them: "(devel) 1a90645...+dirty", or "unknown" without build
// information.
func (i Info) Short() string {
	v := i.Module
	if v == "" {
		return "unknown"
	}
	if i.Commit != "" {
		v += " " + i.Commit
	}
	if i.Modified {
		v += "+dirty"
	}
	return v
}

// Long is what --version prints: version, commit and toolchain.
func (i Info) Long() string {
	module := i.Module
	if module == "" {
		module = "unknown"
	}
	commit := i.Commit
	switch {
	case commit == "":
		commit = "unknown (built without VCS information; use make build)"
	case i.Modified:
		commit += " (modified)"
	}
	return "provebench " + module + "\ncommit " + commit + "\n" + i.Go + "\n"
}

// Revision is the commit, with "+dirty" when the tree had uncommitted
// changes: what results documents record as the environment's git_commit.
// Empty when the build recorded no VCS data.
func (i Info) Revision() string {
	if i.Commit == "" {
		return ""
	}
	if i.Modified {
		return i.Commit + "+dirty"
	}
	return i.Commit
}

// ExecutableSHA256 is the hex SHA-256 of the running binary's file: it
// tells two builds apart where the commit cannot (a modified tree, a
// build without VCS data).
func ExecutableSHA256() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the running binary: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("the running binary: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing the running binary %s: %w", exe, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
