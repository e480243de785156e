// Package version describes the running binary: its module version and the
// git commit it was built from, as the Go toolchain recorded them
// (runtime/debug.ReadBuildInfo; `make build` passes -buildvcs).
package version

import (
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
