//go:build linux

package sample

import (
	"os"
	"strconv"
	"testing"

	"github.com/shirou/gopsutil/v4/process"
)

// BenchmarkProcessSample is the cost of one sample of an idle child process,
// as the runner takes it every sampling interval (10 ms by default: 1% of a
// core is 100 µs).
func BenchmarkProcessSample(b *testing.B) {
	c := startChild(b)
	p, err := NewProcess(c.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	var s ProcSample
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Sample(&s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSample compares ways of taking the same figures, to justify the
// one Process uses:
//
//	pread:    Process.Sample: status and stat kept open, re-read at offset 0
//	reopen:   the same files opened, read and closed each time
//	gopsutil: gopsutil's MemoryInfo (statm) and Times (stat), which
//	          open and parse each time, plus status for VmHWM, which gopsutil
//	          does not expose without a full status parse
func BenchmarkSample(b *testing.B) {
	c := startChild(b)
	pid := c.cmd.Process.Pid
	dir := "/proc/" + strconv.Itoa(pid) + "/"

	b.Run("pread", func(b *testing.B) {
		p, err := NewProcess(pid)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		var s ProcSample
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Sample(&s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reopen", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			status, err := os.ReadFile(dir + "status")
			if err != nil {
				b.Fatal(err)
			}
			rss, ok1 := kibField(status, "\nVmRSS:")
			hwm, ok2 := kibField(status, "\nVmHWM:")
			stat, err := os.ReadFile(dir + "stat")
			if err != nil {
				b.Fatal(err)
			}
			u, s, err := parseStatTimes(stat)
			if err != nil || !ok1 || !ok2 || rss == 0 || hwm < rss || u+s > 1<<40 {
				b.Fatal("bad read", err)
			}
		}
	})
	b.Run("gopsutil", func(b *testing.B) {
		p, err := process.NewProcess(int32(pid))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			mem, err := p.MemoryInfo()
			if err != nil {
				b.Fatal(err)
			}
			times, err := p.Times()
			if err != nil {
				b.Fatal(err)
			}
			status, err := os.ReadFile(dir + "status")
			if err != nil {
				b.Fatal(err)
			}
			hwm, ok := kibField(status, "\nVmHWM:")
			if !ok || mem.RSS == 0 || hwm == 0 || times.User < 0 {
				b.Fatal("bad read")
			}
		}
	})
}
