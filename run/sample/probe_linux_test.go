//go:build linux

package sample

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/provebench/provebench/results"
)

// TestOwnRunCountsFreshPages: touching n fresh pages inside a window
// counts at least n minor faults, and the window's CPU time. Huge pages
// are refused for the mapping, so that each page is a fault of its own.
func TestOwnRunCountsFreshPages(t *testing.T) {
	const pages = 256
	size := pages * os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Munmap(mem) }()
	if err := unix.Madvise(mem, unix.MADV_NOHUGEPAGE); err != nil {
		t.Logf("madvise(MADV_NOHUGEPAGE): %v (THP may merge faults)", err)
	}
	probes := OwnRun()
	probes.Begin()
	for i := 0; i < size; i += os.Getpagesize() {
		mem[i] = 1
	}
	var rep results.Repetition
	probes.End(&rep)
	if rep.MinorFaults == nil || rep.MajorFaults == nil || rep.RunCPUSeconds == nil {
		t.Fatal("page faults or CPU time not read")
	}
	if *rep.MinorFaults < pages || *rep.MajorFaults < 0 || *rep.RunCPUSeconds < 0 {
		t.Errorf("%d pages touched: %d minor, %d major faults, %g s; want at least %d minor", pages, *rep.MinorFaults, *rep.MajorFaults, *rep.RunCPUSeconds, pages)
	}
	// A window never opened measures nothing: absent, not zero.
	var unopened results.Repetition
	OwnRun().End(&unopened)
	if unopened.MinorFaults != nil || unopened.MajorFaults != nil || unopened.RunCPUSeconds != nil {
		t.Error("figures of a window that was never opened are not absent")
	}
}

// counting is a probe that samples.
type counting struct{ begun, samples, ended int }

func (c *counting) Begin()                      { c.begun++ }
func (c *counting) Sample()                     { c.samples++ }
func (c *counting) End(rep *results.Repetition) { c.ended++; rep.Proofs = c.samples }

// TestProbesSampleTheSamplers: a window's probes each begin and end once,
// and only those that sample are asked to at a tick.
func TestProbesSampleTheSamplers(t *testing.T) {
	c := &counting{}
	probes := append(OwnRun(), c)
	probes.Begin()
	probes.Sample()
	probes.Sample()
	var rep results.Repetition
	probes.End(&rep)
	if c.begun != 1 || c.ended != 1 || rep.Proofs != 2 {
		t.Errorf("begun %d, ended %d, sampled %d: want 1, 1, 2", c.begun, c.ended, rep.Proofs)
	}
}
