//go:build linux

package sample

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Tree samples every descendant of a root process: the processes an
// external prover starts (a daemon, its workers, a shell's children), found
// through /proc/<pid>/task/<tid>/children, or by scanning /proc where the
// kernel does not offer that file. The root itself (the repetition's
// supervisor) is left out: it is provebench's, not the prover's.
//
// A Tree is not safe for concurrent use: one sampler goroutine owns it.
type Tree struct {
	root  int
	page  uint64
	procs map[int]*ProcessPeak
	hwm   map[int]bool // processes whose VmHWM was read
	scan  bool         // no children files: scan /proc for parent ids
	// rootMM identifies the root's address space (see mmOf), to leave
	// out a child that still shares it: Go starts processes with vfork,
	// and until its exec the child's resident set is the root's (a
	// short-lived child such as `true` can be read with the supervisor's
	// own resident set). Zero where unreadable.
	rootMM [3]uint64
}

// ProcessPeak is what the tree sampler saw of one process.
type ProcessPeak struct {
	PID  int    `json:"pid"`
	Name string `json:"name"`
	// PeakRSSBytes is the largest of the process's VmHWM samples or, for a
	// process that ended before one was read, wait4's ru_maxrss.
	PeakRSSBytes uint64 `json:"peak_rss_bytes"`
}

// TreeSample is one reading of the tree.
type TreeSample struct {
	// Processes is the number of descendants alive.
	Processes int
	// RSSBytes is their resident sets summed: shared pages count once per
	// process that maps them.
	RSSBytes uint64
	// PSSBytes is their proportional sets summed (shared pages divided
	// among the processes that share them); 0 when not read or unreadable.
	PSSBytes uint64
	// PIDs are the descendants, in the order read.
	PIDs []int
}

// NewTree samples the descendants of root.
func NewTree(root int) *Tree {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children")
	t := &Tree{root: root, page: uint64(os.Getpagesize()), procs: make(map[int]*ProcessPeak), hwm: make(map[int]bool), scan: err != nil}
	t.rootMM, _ = mmOf(root)
	return t
}

// mmOf reads what identifies a process's address space from
// /proc/<pid>/stat: startcode, endcode and startstack (fields 26 to 28).
// A vforked child shares its parent's until it execs; after the exec it
// has its own, at other addresses.
func mmOf(pid int) ([3]uint64, bool) {
	var mm [3]uint64
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return mm, false
	}
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return mm, false
	}
	f := strings.Fields(string(stat[end+1:]))
	if len(f) < 26 {
		return mm, false
	}
	for i := range mm {
		v, err := strconv.ParseUint(f[23+i], 10, 64)
		if err != nil {
			return mm, false
		}
		mm[i] = v
	}
	return mm, mm != [3]uint64{}
}

// ownMemory reports whether a child of the root has an address space of
// its own (has exec'd).
//
// The root's address space is read again each time: a root sampled right
// after it was started may itself not have exec'd yet (it then shares its
// own parent's), and a child vforked after the root's exec shares the
// root's new one (the supervisor's tens of MiB, counted as a command's
// when compared with the old).
func (t *Tree) ownMemory(pid int) bool {
	if now, ok := mmOf(t.root); ok {
		t.rootMM = now
	}
	if t.rootMM == [3]uint64{} {
		return true // nothing to tell by
	}
	mm, ok := mmOf(pid)
	return !ok || mm != t.rootMM
}

// Descendants lists the processes below the root now.
func (t *Tree) Descendants() []int { return t.walk(nil) }

// walk lists the processes below the root, without the root's children
// (and their subtrees) for which keep is false.
func (t *Tree) walk(keep func(pid int) bool) []int {
	if t.scan {
		return scanDescendants(t.root, keep)
	}
	var out []int
	queue := []int{t.root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children(pid) {
			if pid == t.root && keep != nil && !keep(c) {
				continue
			}
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, task := range tasks {
		data, err := os.ReadFile(dir + task.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// scanDescendants finds the descendants of root from every process's
// parent id.
func scanDescendants(root int, keep func(pid int) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := make(map[int][]int)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if ppid, ok := statPPID(data); ok {
			kids[ppid] = append(kids[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			if p == root && keep != nil && !keep(c) {
				continue
			}
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// statPPID reads field 4 (ppid) of /proc/<pid>/stat.
func statPPID(stat []byte) (int, bool) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, false
	}
	f := strings.Fields(string(stat[end+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// Sample reads the resident set of every descendant (statm); with detail,
// also every one's name and VmHWM (status) for the per-process peaks, and
// its PSS (smaps_rollup, which walks the page tables: slower, so callers
// ask for it at a longer interval).
func (t *Tree) Sample(detail bool) TreeSample {
	pids := t.walk(t.ownMemory)
	s := TreeSample{PIDs: pids}
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/"
		statm, err := os.ReadFile(dir + "statm")
		if err != nil {
			continue
		}
		f := strings.Fields(string(statm))
		if len(f) < 2 {
			continue
		}
		pages, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil || pages == 0 {
			continue // a zombie has no address space
		}
		s.Processes++
		s.RSSBytes += pages * t.page
		p := t.procs[pid]
		if p == nil {
			p = &ProcessPeak{PID: pid}
			t.procs[pid] = p
		}
		p.PeakRSSBytes = max(p.PeakRSSBytes, pages*t.page)
		if !detail {
			continue
		}
		if status, err := os.ReadFile(dir + "status"); err == nil {
			if name, ok := statusName(status); ok {
				p.Name = name
			}
			if hwm, ok := kibField(status, "\nVmHWM:"); ok {
				p.PeakRSSBytes = max(p.PeakRSSBytes, hwm<<10)
				t.hwm[pid] = true
			}
		}
		if rollup, err := os.ReadFile(dir + "smaps_rollup"); err == nil {
			if pss, ok := kibField(rollup, "\nPss:"); ok {
				s.PSSBytes += pss << 10
			}
		}
	}
	return s
}

func statusName(status []byte) (string, bool) {
	line, _, _ := bytes.Cut(status, []byte("\n"))
	name, ok := bytes.CutPrefix(line, []byte("Name:"))
	return string(bytes.TrimSpace(name)), ok
}

// Reaped records a descendant's exit figures from wait4. Its ru_maxrss
// stands for the process's peak only where no VmHWM was read: it includes
// the process's own waited-for children (a shell's ru_maxrss is its largest
// command's) and the supervisor's peak before exec (see
// Usage.PeakRSSBytes), so it is the upper bound of a short-lived process.
func (t *Tree) Reaped(pid int, maxRSS uint64) {
	if t.hwm[pid] || maxRSS == 0 { // 0: unknown
		return
	}
	p := t.procs[pid]
	if p == nil {
		p = &ProcessPeak{PID: pid}
		t.procs[pid] = p
	}
	p.PeakRSSBytes = max(p.PeakRSSBytes, maxRSS)
}

// Peaks lists every process seen, largest peak first.
func (t *Tree) Peaks() []ProcessPeak {
	out := make([]ProcessPeak, 0, len(t.procs))
	for _, p := range t.procs {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b ProcessPeak) int {
		if a.PeakRSSBytes != b.PeakRSSBytes {
			if a.PeakRSSBytes > b.PeakRSSBytes {
				return -1
			}
			return 1
		}
		return a.PID - b.PID
	})
	return out
}

// SelfPeak is this process's own VmHWM (0 when unreadable). A child it
// started folds this figure into its ru_maxrss (see Usage.PeakRSSBytes),
// so a ru_maxrss that is not above it says nothing of the child's own.
func SelfPeak() uint64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	hwm, _ := kibField(status, "\nVmHWM:")
	return hwm << 10
}
