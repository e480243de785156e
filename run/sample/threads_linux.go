//go:build linux

package sample

import (
	"bytes"
	"os"
	"strconv"
)

// ThreadCPU is one thread of this process and its CPU time so far.
type ThreadCPU struct {
	TID int
	// Name is the thread's name (comm): Go's threads carry the binary's,
	// threads a C library started may carry their own (CUDA's
	// "cuda-EvtHandlr", ...).
	Name    string
	Seconds float64
}

// Threads reads every thread of this process from /proc/self/task, in the
// kernel's clock ticks (10 ms). A thread that ends while it reads is left
// out.
func Threads() ([]ThreadCPU, error) {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tick := clockTick()
	out := make([]ThreadCPU, 0, len(entries))
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/self/task/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		utime, stime, err := parseStatTimes(stat)
		if err != nil {
			continue
		}
		name := ""
		if i, j := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')'); i >= 0 && j > i {
			name = string(stat[i+1 : j])
		}
		out = append(out, ThreadCPU{TID: tid, Name: name, Seconds: float64(utime+stime) / tick})
	}
	return out, nil
}
