// Package hostmem allocates large buffers outside the Go heap.
//
// Proving datasets are gigabytes: if they lived on the Go heap, RSS would fall
// only when the garbage collector returned the pages, long after the pipeline
// freed them, and the memory figures provebench reports would describe the
// collector rather than the strategy. Buffers here are anonymous private
// mappings (mmap) released with munmap, so a Free is a free: the kernel takes
// the pages back before Free returns, as in the C++ engines being modelled.
package hostmem

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrFreed is returned when a buffer is used after Free.
var ErrFreed = errors.New("hostmem: buffer already freed")

// Buffer is one anonymous mapping. The zero value is not usable; create
// buffers with Alloc or Map. A Buffer is safe for concurrent Free calls;
// the bytes themselves are not synchronised.
type Buffer struct {
	mu     sync.Mutex
	mem    []byte
	size   int64
	file   bool   // mapping of a file (read-only), not anonymous memory
	pinner Pinner // set while the pages are page-locked
	// pool lent this handle the memory of its own buffer own: Free ends
	// the handle and gives the memory back, locked.
	pool *Pool
	own  *Buffer
}

// Pinner page-locks host memory for a device's copy engines (CUDA's
// cuMemHostRegister), so that uploads from it run as direct DMA. GPU
// backends implement it.
type Pinner interface {
	Pin(mem []byte) error
	Unpin(mem []byte) error
}

// Pin page-locks the buffer's pages with p until Free, which unlocks them
// before it unmaps. Pinning commits every page at once: RSS rises by the
// buffer's size, where an unpinned buffer grows as it is written.
func (b *Buffer) Pin(p Pinner) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.mem == nil:
		return ErrFreed
	case b.pinner != nil, b.pool != nil:
		return nil
	}
	if err := p.Pin(b.mem); err != nil {
		return fmt.Errorf("hostmem: pin %d bytes: %w", b.size, err)
	}
	b.pinner = p
	return nil
}

// Pinned reports whether the buffer's pages are page-locked.
func (b *Buffer) Pinned() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pinner != nil || (b.pool != nil && b.mem != nil)
}

// Alloc maps size bytes of zeroed anonymous memory. Pages are committed by
// the kernel on first touch, so RSS grows as the buffer is written, as it
// does for malloc'd memory in the engines being modelled.
func Alloc(size int64) (*Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("hostmem: invalid size %d", size)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("hostmem: size %d overflows int", size)
	}
	mem, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("hostmem: mmap %d bytes: %w", size, err)
	}
	return &Buffer{mem: mem, size: size}, nil
}

// MapFile maps length bytes of fd from offset read-only and shared, so that
// several processes reading the same cached key share its page cache.
// offset must be a multiple of the page size.
func MapFile(fd int, offset, length int64) (*Buffer, error) {
	if length <= 0 {
		return nil, fmt.Errorf("hostmem: invalid mapping length %d", length)
	}
	mem, err := unix.Mmap(fd, offset, int(length), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("hostmem: mmap file (%d bytes at %d): %w", length, offset, err)
	}
	return &Buffer{mem: mem, size: length, file: true}, nil
}

// Bytes returns the mapped memory, or nil after Free.
func (b *Buffer) Bytes() []byte {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mem
}

// Size is the mapping's length in bytes; it stays valid after Free.
func (b *Buffer) Size() int64 {
	if b == nil {
		return 0
	}
	return b.size
}

// Addr is the mapping's start address, 0 after Free: it names the mapping
// in /proc/<pid>/smaps, where its resident bytes can be read.
func (b *Buffer) Addr() uintptr {
	mem := b.Bytes()
	if len(mem) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&mem[0]))
}

// Freed reports whether Free has run.
func (b *Buffer) Freed() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mem == nil
}

// Free unmaps the buffer and returns the pages to the kernel. It returns the
// number of bytes unmapped: the buffer's size on the first call, 0 after.
// Any slice derived from the buffer must not be used after Free.
func (b *Buffer) Free() (int64, error) {
	if b == nil {
		return 0, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mem == nil {
		return 0, nil
	}
	if b.pool != nil {
		b.mem = nil
		return b.size, b.pool.giveBack(b.own)
	}
	var unpinErr error
	if b.pinner != nil {
		// Unmapping page-locked memory leaves the driver's registration
		// dangling: unlock first. If that fails the pages are unmapped all
		// the same (the buffer is gone either way) and the error reported.
		if err := b.pinner.Unpin(b.mem); err != nil {
			unpinErr = fmt.Errorf("hostmem: unpin %d bytes: %w", b.size, err)
		}
		b.pinner = nil
	}
	if err := unix.Munmap(b.mem); err != nil {
		return 0, errors.Join(unpinErr, fmt.Errorf("hostmem: munmap %d bytes: %w", b.size, err))
	}
	b.mem = nil
	return b.size, unpinErr
}

// Slice views a buffer as a slice of T. The buffer's size must be a
// multiple of T's size. T must be a plain value type (no pointers), since the
// garbage collector does not scan mapped memory.
func Slice[T any](b *Buffer) ([]T, error) {
	mem := b.Bytes()
	if mem == nil {
		return nil, ErrFreed
	}
	var zero T
	sz := int(unsafe.Sizeof(zero))
	if sz == 0 || len(mem)%sz != 0 {
		return nil, fmt.Errorf("hostmem: %d bytes is not a whole number of %d-byte elements", len(mem), sz)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[0])), len(mem)/sz), nil
}

// AllocSlice allocates room for n values of T and returns the buffer and its
// typed view.
func AllocSlice[T any](n int) (*Buffer, []T, error) {
	var zero T
	b, err := Alloc(int64(n) * int64(unsafe.Sizeof(zero)))
	if err != nil {
		return nil, nil, err
	}
	s, err := Slice[T](b)
	if err != nil {
		_, _ = b.Free()
		return nil, nil, err
	}
	return b, s, nil
}
