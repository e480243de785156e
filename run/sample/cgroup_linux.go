//go:build linux

package sample

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// cgroupRoot is where the unified (v2) hierarchy is mounted.
const cgroupRoot = "/sys/fs/cgroup"

// Cgroup is a cgroup v2 group made for one repetition's process tree, below
// the group provebench runs in. The kernel then keeps the tree's exact
// memory peak (memory.peak), enforces its limit (memory.max) and kills the
// whole tree at once (cgroup.kill), whatever its processes do to escape a
// process group or a session. Which of those the host offers depends on
// the delegation: a group is still made when the memory controller is not
// enabled for it, and only the kill is then available.
type Cgroup struct {
	dir string
	fd  int
}

// NewCgroup makes a group named name below this process's own group and
// sets memory.max to memoryMax when it is positive and the memory
// controller is there. It fails where the host has no writable cgroup v2
// hierarchy (cgroup v1, a container without delegation).
func NewCgroup(name string, memoryMax int64) (*Cgroup, error) {
	own, err := ownCgroup()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cgroupRoot, own, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	c := &Cgroup{dir: dir, fd: fd}
	if memoryMax > 0 && c.HasMemory() {
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(memoryMax, 10)), 0); err != nil {
			c.Close()
			return nil, fmt.Errorf("cgroup: memory.max: %w", err)
		}
	}
	return c, nil
}

// ownCgroup is this process's group in the unified hierarchy.
func ownCgroup() (string, error) {
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err != nil {
		return "", fmt.Errorf("cgroup: no cgroup v2 hierarchy at %s", cgroupRoot)
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return rest, nil
		}
	}
	return "", errors.New("cgroup: this process is in no cgroup v2 group")
}

// Dir is the group's directory.
func (c *Cgroup) Dir() string { return c.dir }

// FD is an open descriptor of the group's directory, for starting a process
// straight into it (SysProcAttr.UseCgroupFD).
func (c *Cgroup) FD() int { return c.fd }

// HasMemory reports whether the memory controller is enabled for the group.
func (c *Cgroup) HasMemory() bool {
	_, err := os.Stat(filepath.Join(c.dir, "memory.max"))
	return err == nil
}

// Peak is the group's memory.peak (the kernel's high-water mark of the
// group's memory: anonymous memory and the page cache its processes
// charged); false where the kernel (before 5.19) or the delegation lacks it.
func (c *Cgroup) Peak() (uint64, bool) {
	data, err := os.ReadFile(filepath.Join(c.dir, "memory.peak"))
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	return v, err == nil
}

// OOMKills is how many processes the kernel killed for passing memory.max.
func (c *Cgroup) OOMKills() int {
	data, err := os.ReadFile(filepath.Join(c.dir, "memory.events"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(rest)
			return n
		}
	}
	return 0
}

// Kill sends SIGKILL to every process of the group (cgroup.kill, Linux 5.14).
func (c *Cgroup) Kill() error {
	return os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
}

// Close removes the group, which must be empty by then.
func (c *Cgroup) Close() error {
	unix.Close(c.fd)
	return os.Remove(c.dir)
}
