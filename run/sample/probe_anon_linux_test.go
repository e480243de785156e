package sample

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/provebench/provebench/results"
)

// TestPeakAnonCountsTheWorksMemory: 64 MiB of anonymous memory touched
// and freed inside the window is in the peak (the kernel's peak less the
// file pages keeps it after the free), and the binary's own file pages are
// not: the figure stays under the kernel's whole peak, which counts the
// test binary's megabytes of file pages.
func TestPeakAnonCountsTheWorksMemory(t *testing.T) {
	const size = 64 << 20
	before, ok := selfMemory()
	if !ok {
		t.Skip("no /proc/self/status")
	}
	p := &peakAnon{}
	p.Begin()
	buf, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < size; i += 4096 {
		buf[i] = 1
	}
	p.Sample()
	if err := unix.Munmap(buf); err != nil {
		t.Fatal(err)
	}
	var rep results.Repetition
	p.End(&rep)
	after, _ := selfMemory()
	if rep.PeakAnonBytes == nil {
		t.Fatal("no peak")
	}
	got := *rep.PeakAnonBytes
	if got < size || got < before.anon+size*9/10 {
		t.Errorf("peak anon %d MiB, want at least the 64 MiB touched over the %d MiB before", got>>20, before.anon>>20)
	}
	if after.file < 2<<20 || got+1<<20 > after.hwm {
		t.Errorf("peak anon %d MiB, kernel peak %d MiB with %d MiB of file pages: the file pages are counted", got>>20, after.hwm>>20, after.file>>20)
	}
	// A tick outside the window counts nothing.
	p.Sample()
	if p.sampled != 0 && p.open {
		t.Error("a sample after End was counted")
	}
}
