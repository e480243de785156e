//go:build linux

package sample

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// MappingRSS returns the resident bytes of the mapping of process pid (0:
// this process) that starts at addr, from /proc/<pid>/smaps: the pages the
// process itself has faulted in, not the file's pages in the page cache.
// The kernel walks the page tables to compute it, so the cost grows with
// the mapping's size: sample it every 100 ms or so, not every tick.
func MappingRSS(pid int, addr uintptr) (uint64, error) {
	path := "/proc/self/smaps"
	if pid > 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/smaps"
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("sample: %w", err)
	}
	defer f.Close()
	prefix := []byte(strconv.FormatUint(uint64(addr), 16) + "-")
	sc := bufio.NewScanner(f)
	found := false
	for sc.Scan() {
		line := sc.Bytes()
		if !found {
			found = bytes.HasPrefix(line, prefix)
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("Rss:")); ok {
			kib, err := strconv.ParseUint(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("sample: %s: Rss line %q: %w", path, line, err)
			}
			return kib << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("sample: %s: %w", path, err)
	}
	return 0, fmt.Errorf("sample: %s: no mapping at %#x", path, addr)
}

// SharedRSS returns the resident bytes of process pid (0: this process)
// that are backed by files or shared memory (the third field of
// /proc/<pid>/statm: RssFile + RssShmem). The kernel keeps the figure as a
// counter, so it costs a few microseconds whatever the mappings' sizes:
// between two MappingRSS reads of a file mapping, its growth follows that
// mapping when it is the one file the process is reading.
func SharedRSS(pid int) (uint64, error) {
	path := "/proc/self/statm"
	if pid > 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/statm"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("sample: %w", err)
	}
	f := bytes.Fields(data)
	if len(f) < 3 {
		return 0, fmt.Errorf("sample: %s: %q has no shared field", path, data)
	}
	pages, err := strconv.ParseUint(string(f[2]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("sample: %s: shared field: %w", path, err)
	}
	return pages * uint64(os.Getpagesize()), nil
}
