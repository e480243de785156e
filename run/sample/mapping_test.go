//go:build linux

package sample

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A mapping is resident only as far as it has been touched.
func TestMappingRSS(t *testing.T) {
	const size = 64 << 20
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	addr := uintptr(unsafe.Pointer(&mem[0]))
	before, err := MappingRSS(0, addr)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < size/2; i += 4096 {
		mem[i] = 1
	}
	after, err := MappingRSS(0, addr)
	if err != nil {
		t.Fatal(err)
	}
	if before > 1<<20 || after < size/2 || after > size/2+(1<<20) {
		t.Errorf("resident before %d, after touching half of %d: %d", before, size, after)
	}
	if shared, err := SharedRSS(0); err != nil || shared == 0 {
		t.Errorf("shared RSS %d, %v", shared, err)
	}
	if _, err := MappingRSS(0, addr+4096*3); err == nil {
		t.Error("an address inside a mapping, not its start, was found")
	}
}

// The cost of one read of a mapping's residency, here a touched 256 MiB
// mapping: the kernel walks its page tables and formats every mapping of
// the process.
func BenchmarkMappingRSS(b *testing.B) {
	const size = 256 << 20
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Munmap(mem)
	for i := 0; i < size; i += 4096 {
		mem[i] = 1
	}
	addr := uintptr(unsafe.Pointer(&mem[0]))
	for b.Loop() {
		if _, err := MappingRSS(0, addr); err != nil {
			b.Fatal(err)
		}
	}
}
