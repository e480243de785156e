//go:build linux

package sample

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const mib = 1 << 20

// within reports whether got is within frac of want.
func within(got, want int64, frac float64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return float64(d) <= frac*float64(want)
}

func mustSample(t *testing.T, p *Process) ProcSample {
	t.Helper()
	var s ProcSample
	if err := p.Sample(&s); err != nil {
		t.Fatalf("Sample: %v", err)
	}
	if s.PeakRSSBytes < s.RSSBytes {
		t.Fatalf("VmHWM %d below VmRSS %d in one sample", s.PeakRSSBytes, s.RSSBytes)
	}
	return s
}

func TestProcessSelf(t *testing.T) {
	p, err := NewProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	before := mustSample(t, p)
	if before.RSSBytes == 0 {
		t.Fatal("RSS of a running process is 0")
	}

	const size = 128 * mib
	mem, err := touchMapping(size)
	if err != nil {
		t.Fatal(err)
	}
	grown := mustSample(t, p)
	fast, err := p.RSS()
	if err != nil {
		t.Fatal(err)
	}
	if !within(int64(fast), int64(grown.RSSBytes), 0.02) {
		t.Errorf("RSS from statm %d MiB, from status %d MiB", fast/mib, grown.RSSBytes/mib)
	}
	growth := int64(grown.RSSBytes) - int64(before.RSSBytes)
	if !within(growth, size, 0.05) {
		t.Errorf("RSS grew by %d MiB after touching %d MiB", growth/mib, size/mib)
	}
	if grown.PeakRSSBytes < before.RSSBytes+size*95/100 {
		t.Errorf("VmHWM %d MiB below RSS before (%d MiB) + %d MiB", grown.PeakRSSBytes/mib, before.RSSBytes/mib, size/mib)
	}
	if err := unix.Munmap(mem); err != nil {
		t.Fatal(err)
	}
	freed := mustSample(t, p)
	if drop := int64(grown.RSSBytes) - int64(freed.RSSBytes); !within(drop, size, 0.05) {
		t.Errorf("RSS fell by %d MiB after unmapping %d MiB", drop/mib, size/mib)
	}
	// The kernel's high-water mark is kept from its per-CPU batched
	// counters, so it can read a little below an earlier exact VmRSS; it
	// must not lose the allocation.
	if !within(int64(freed.PeakRSSBytes), int64(grown.PeakRSSBytes), 0.01) {
		t.Errorf("VmHWM went from %d to %d after a free", grown.PeakRSSBytes, freed.PeakRSSBytes)
	}

	runtime.LockOSThread() // keep the spin on one thread; the figure is per process anyway
	defer runtime.UnlockOSThread()
	if err := spinUser(100e6); err != nil {
		t.Fatal(err)
	}
	spun := mustSample(t, p)
	if d := spun.UserSeconds - freed.UserSeconds; d < 0.08 {
		t.Errorf("user CPU rose by %.3f s after spinning 0.1 s", d)
	}
	if spun.SystemSeconds < freed.SystemSeconds {
		t.Errorf("system CPU fell from %.3f to %.3f", freed.SystemSeconds, spun.SystemSeconds)
	}
}

func TestProcessChild(t *testing.T) {
	c := startChild(t)
	c.do("spin 1") // the child is up and serving
	p, err := NewProcess(c.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Pid() != c.cmd.Process.Pid {
		t.Fatalf("Pid() = %d, want %d", p.Pid(), c.cmd.Process.Pid)
	}

	base := mustSample(t, p)
	const size = 256 * mib
	c.do("alloc %d", size/mib)
	grown := mustSample(t, p)
	if growth := int64(grown.RSSBytes) - int64(base.RSSBytes); !within(growth, size, 0.03) {
		t.Errorf("child RSS grew by %d MiB after touching %d MiB", growth/mib, size/mib)
	}
	c.do("free")
	freed := mustSample(t, p)
	if drop := int64(grown.RSSBytes) - int64(freed.RSSBytes); !within(drop, size, 0.03) {
		t.Errorf("child RSS fell by %d MiB after unmapping %d MiB", drop/mib, size/mib)
	}
	// The kernel's peak keeps what the samples now miss.
	if freed.PeakRSSBytes < base.RSSBytes+size*97/100 {
		t.Errorf("child VmHWM %d MiB after freeing, want >= %d MiB", freed.PeakRSSBytes/mib, (base.RSSBytes+size)/mib)
	}

	c.do("spin 200")
	spun := mustSample(t, p)
	if d := spun.UserSeconds - freed.UserSeconds; d < 0.15 {
		t.Errorf("child user CPU rose by %.3f s after spinning 0.2 s", d)
	}

	// Exited but not reaped: a zombie has no memory to report.
	c.exit()
	var s ProcSample
	if err := p.Sample(&s); !errors.Is(err, ErrExited) {
		t.Fatalf("Sample of a zombie: %v, want ErrExited", err)
	}
	ps := c.wait()
	if err := p.Sample(&s); !errors.Is(err, ErrExited) {
		t.Fatalf("Sample of a reaped process: %v, want ErrExited", err)
	}
	if s != (ProcSample{}) {
		t.Errorf("failed Sample wrote %+v", s)
	}

	u, err := ExitUsage(ps)
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSSBytes < spun.PeakRSSBytes {
		t.Errorf("wait4 peak %d MiB below sampled VmHWM %d MiB", u.PeakRSSBytes/mib, spun.PeakRSSBytes/mib)
	}
	// /proc rounds CPU time down to clock ticks; rusage does not.
	if u.UserSeconds < spun.UserSeconds || u.SystemSeconds < spun.SystemSeconds {
		t.Errorf("wait4 CPU %.3f+%.3f s below sampled %.3f+%.3f s", u.UserSeconds, u.SystemSeconds, spun.UserSeconds, spun.SystemSeconds)
	}
}

// TestExitUsageIncludesParentPeak pins down the caveat documented on
// Usage.PeakRSSBytes: a child started by os/exec shares its parent's address
// space until exec, and the kernel charges that space's peak to the child.
func TestExitUsageIncludesParentPeak(t *testing.T) {
	const size = 192 * mib
	mem, err := touchMapping(size)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	self, err := NewProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	parent := mustSample(t, self)

	c := startChild(t)
	c.do("spin 1")
	p, err := NewProcess(c.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	own := mustSample(t, p)
	c.exit()
	u, err := ExitUsage(c.wait())
	if err != nil {
		t.Fatal(err)
	}
	if own.PeakRSSBytes >= size {
		t.Fatalf("idle child's own VmHWM is %d MiB; the test needs it below %d MiB", own.PeakRSSBytes/mib, size/mib)
	}
	if u.PeakRSSBytes < size {
		t.Errorf("wait4 peak %d MiB, parent's VmHWM %d MiB, child's own %d MiB: the kernel no longer charges the parent's peak to a vforked child; update Usage's documentation",
			u.PeakRSSBytes/mib, parent.PeakRSSBytes/mib, own.PeakRSSBytes/mib)
	}
}

func TestNewProcessErrors(t *testing.T) {
	if _, err := NewProcess(0); err == nil {
		t.Error("NewProcess(0) succeeded")
	}
	// A child that has been reaped cannot be opened.
	c := startChild(t)
	c.exit()
	pid := c.cmd.Process.Pid
	c.wait()
	_, err := NewProcess(pid)
	if !errors.Is(err, ErrExited) {
		t.Errorf("NewProcess of a reaped pid: %v, want ErrExited", err)
	}
}

func TestSampleAfterClose(t *testing.T) {
	p, err := NewProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	var s ProcSample
	if err := p.Sample(&s); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Sample after Close: %v", err)
	}
}

func TestParseStatTimes(t *testing.T) {
	for _, tc := range []struct {
		name, stat   string
		utime, stime uint64
		err          string
	}{
		{name: "plain", utime: 1234, stime: 56,
			stat: "4242 (provebench) S 1 4242 4242 0 -1 4194560 2059 0 0 0 1234 56 0 0 20 0 9 0 1234567 1258291200 3003 18446744073709551615"},
		{name: "name with spaces and parens", utime: 7, stime: 8,
			stat: "99 (a) b) (c d) R 1 99 99 0 -1 4194560 1 0 0 0 7 8 0 0 20 0 1 0 5 6 7 8"},
		{name: "truncated", err: "field 15",
			stat: "99 (x) R 1 99 99 0 -1 4194560 1 0 0 0 7"},
		{name: "not a number", err: "utime",
			stat: "99 (x) R 1 99 99 0 -1 4194560 1 0 0 0 x 8 0"},
		{name: "no name", err: "')'", stat: "99 x R 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, s, err := parseStatTimes([]byte(tc.stat))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || u != tc.utime || s != tc.stime {
				t.Fatalf("got %d, %d, %v; want %d, %d", u, s, err, tc.utime, tc.stime)
			}
		})
	}
}

func TestKiBField(t *testing.T) {
	status := []byte("Name:\tx\nVmPeak:\t  999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nRssAnon:\t 1 kB\nVmBad:\t12\n")
	for _, tc := range []struct {
		key  string
		want uint64
		ok   bool
	}{
		{"\nVmHWM:", 2048, true},
		{"\nVmRSS:", 1024, true},
		{"\nVmSwap:", 0, false},
		{"\nVmBad:", 0, false}, // no unit: not what we expect, not misread
	} {
		got, ok := kibField(status, tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("kibField(%q) = %d, %v; want %d, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

func TestClockTick(t *testing.T) {
	// USER_HZ is 100 on every architecture Go supports on Linux; the value
	// must come from the auxiliary vector, which the kernel always fills.
	auxv, err := unix.Auxv()
	if err != nil {
		t.Skipf("auxiliary vector unreadable here: %v", err)
	}
	found := false
	for _, kv := range auxv {
		if kv[0] == atClkTck {
			found = true
			if float64(kv[1]) != clockTick() {
				t.Errorf("clockTick() = %v, AT_CLKTCK = %d", clockTick(), kv[1])
			}
		}
	}
	if !found {
		t.Error("no AT_CLKTCK in the auxiliary vector")
	}
}
