//go:build linux

package sample

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Process samples one process through /proc/<pid>/status (VmRSS, VmHWM) and
// /proc/<pid>/stat (CPU times). The files stay open for the life of the
// Process: re-reading an open proc file from offset 0 makes the kernel
// regenerate it, which costs a fraction of an open/read/close cycle, and an
// open file keeps referring to the same process even if its pid is reused
// after it has been reaped.
//
// A Process is not safe for concurrent use: one sampler goroutine owns it.
type Process struct {
	pid    int
	status int // fd of /proc/<pid>/status, -1 once closed
	stat   int // fd of /proc/<pid>/stat, -1 once closed
	statm  int // fd of /proc/<pid>/statm, -1 once closed
	buf    []byte
	page   uint64
}

// procBufSize holds /proc/<pid>/status on ordinary hosts, with room;
// Sample grows the buffer when a host's file is larger (long CPU and node
// masks on big machines).
const procBufSize = 4096

// NewProcess opens pid for sampling and takes one sample, so that a pid that
// cannot be sampled (no such process, no permission, already exited) fails
// here rather than at the first tick.
func NewProcess(pid int) (*Process, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("sample: invalid pid %d", pid)
	}
	p := &Process{pid: pid, status: -1, stat: -1, statm: -1, buf: make([]byte, procBufSize), page: uint64(os.Getpagesize())}
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	var err error
	if p.status, err = openProc(dir + "status"); err != nil {
		return nil, p.wrap(err)
	}
	if p.stat, err = openProc(dir + "stat"); err != nil {
		p.Close()
		return nil, p.wrap(err)
	}
	if p.statm, err = openProc(dir + "statm"); err != nil {
		p.Close()
		return nil, p.wrap(err)
	}
	var s ProcSample
	if err := p.Sample(&s); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func openProc(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &pathError{path: path, err: err}
		}
		return fd, nil
	}
}

// pathError names the proc file without allocating on the sampling path:
// it is only built when opening fails.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// Pid is the process being sampled.
func (p *Process) Pid() int { return p.pid }

// Sample reads the process's current figures into dst. It returns an error
// wrapping ErrExited once the process has exited; dst is then left as it was.
func (p *Process) Sample(dst *ProcSample) error {
	if p.status < 0 {
		return fmt.Errorf("sample pid %d: process sampler closed", p.pid)
	}
	status, err := p.read(p.status)
	if err != nil {
		return p.wrap(err)
	}
	rssKiB, okRSS := kibField(status, "\nVmRSS:")
	hwmKiB, okHWM := kibField(status, "\nVmHWM:")
	if !okRSS || !okHWM {
		// The kernel prints the Vm lines only while the process has an
		// address space: a zombie has none.
		return p.wrap(ErrExited)
	}
	// Copy out before the stat read reuses the buffer.
	rss, hwm := rssKiB<<10, hwmKiB<<10

	stat, err := p.read(p.stat)
	if err != nil {
		return p.wrap(err)
	}
	utime, stime, err := parseStatTimes(stat)
	if err != nil {
		return fmt.Errorf("sample pid %d: /proc/%d/stat: %w", p.pid, p.pid, err)
	}
	tick := clockTick()
	*dst = ProcSample{
		RSSBytes:      rss,
		PeakRSSBytes:  hwm,
		UserSeconds:   float64(utime) / tick,
		SystemSeconds: float64(stime) / tick,
	}
	return nil
}

// RSS reads only the resident set, from /proc/<pid>/statm: about a seventh
// of Sample's cost (the kernel formats status, the larger file, for every
// read), for sampling at short intervals. The kernel's peak (VmHWM) needs
// Sample.
func (p *Process) RSS() (uint64, error) {
	if p.statm < 0 {
		return 0, fmt.Errorf("sample pid %d: process sampler closed", p.pid)
	}
	statm, err := p.read(p.statm)
	if err != nil {
		return 0, p.wrap(err)
	}
	// statm: size resident shared text lib data dt, in pages.
	i := bytes.IndexByte(statm, ' ')
	if i < 0 {
		return 0, fmt.Errorf("sample pid %d: /proc/%d/statm: unexpected %q", p.pid, p.pid, statm)
	}
	pages, n := parseUint(statm[i+1:])
	if n == 0 {
		return 0, fmt.Errorf("sample pid %d: /proc/%d/statm: unexpected %q", p.pid, p.pid, statm)
	}
	if pages == 0 {
		// A zombie has no address space: every field reads 0.
		return 0, p.wrap(ErrExited)
	}
	return pages * p.page, nil
}

// read re-reads a whole proc file into p.buf with one pread at offset 0,
// growing the buffer if the file did not fit.
func (p *Process) read(fd int) ([]byte, error) {
	for {
		n, err := unix.Pread(fd, p.buf, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, err
		case n == len(p.buf):
			// Possibly truncated: retry with room to spare.
			p.buf = make([]byte, 2*len(p.buf))
			continue
		case n == 0:
			// A proc file of a live process is never empty.
			return nil, ErrExited
		}
		return p.buf[:n], nil
	}
}

func (p *Process) wrap(err error) error {
	// Reading a reaped process's proc files fails with ESRCH.
	if errors.Is(err, unix.ESRCH) || errors.Is(err, unix.ENOENT) {
		if !errors.Is(err, ErrExited) {
			err = fmt.Errorf("%w (%w)", ErrExited, err)
		}
	}
	return fmt.Errorf("sample pid %d: %w", p.pid, err)
}

// Close releases the proc files. It is safe to call more than once.
func (p *Process) Close() error {
	var errs []error
	for _, fd := range []*int{&p.status, &p.stat, &p.statm} {
		if *fd >= 0 {
			if err := unix.Close(*fd); err != nil {
				errs = append(errs, err)
			}
			*fd = -1
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sample pid %d: close: %w", p.pid, err)
	}
	return nil
}

// kibField finds a "Key:   123 kB" line of /proc/<pid>/status and returns
// its value in KiB. key includes the leading newline so that it matches a
// whole field name (the first line, Name:, is never looked up).
func kibField(status []byte, key string) (uint64, bool) {
	i := bytes.Index(status, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := status[i+len(key):]
	for len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
		rest = rest[1:]
	}
	v, n := parseUint(rest)
	if n == 0 || !bytes.HasPrefix(rest[n:], []byte(" kB")) {
		return 0, false
	}
	return v, true
}

// parseStatTimes returns utime and stime (fields 14 and 15, in clock ticks)
// of /proc/<pid>/stat. The command name (field 2) is in parentheses and may
// itself contain spaces and parentheses, so fields are counted from the last
// ')'.
func parseStatTimes(stat []byte) (utime, stime uint64, err error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, 0, errors.New("no ')' after the command name")
	}
	// Fields after ") " start at field 3 (state); utime is field 14.
	rest := stat[end+1:]
	const utimeField, stimeField = 14, 15
	field := 2
	for field < stimeField {
		if len(rest) == 0 || rest[0] != ' ' {
			return 0, 0, fmt.Errorf("field %d: missing", field+1)
		}
		rest = rest[1:]
		field++
		v, n := parseUint(rest)
		switch field {
		case utimeField:
			if n == 0 {
				return 0, 0, fmt.Errorf("field %d (utime): not a number", field)
			}
			utime = v
		case stimeField:
			if n == 0 {
				return 0, 0, fmt.Errorf("field %d (stime): not a number", field)
			}
			stime = v
		}
		// Skip to the end of this field.
		j := bytes.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		rest = rest[j:]
	}
	return utime, stime, nil
}

// parseUint parses leading decimal digits; n is how many it consumed.
func parseUint(b []byte) (v uint64, n int) {
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		v = v*10 + uint64(b[n]-'0')
		n++
	}
	return v, n
}

// atClkTck is AT_CLKTCK of <elf.h>: the auxiliary-vector entry in which the
// kernel tells a process the unit of the CPU times in /proc (USER_HZ).
const atClkTck = 17

// clockTick is USER_HZ, read once from the auxiliary vector as glibc's
// sysconf(_SC_CLK_TCK) does, falling back to 100 (USER_HZ on every
// mainstream Linux architecture) when the vector cannot be read.
var clockTick = sync.OnceValue(func() float64 {
	auxv, err := unix.Auxv()
	if err == nil {
		for _, kv := range auxv {
			if kv[0] == atClkTck && kv[1] > 0 {
				return float64(kv[1])
			}
		}
	}
	return 100
})
