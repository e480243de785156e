// Package openfile opens the files provebench reads without waiting in
// open(2): a FIFO with no writer yet blocks an ordinary open where no
// signal can reach it (the runtime cannot interrupt the system call), so
// a reader given one would ignore SIGINT and SIGTERM for as long as no
// writer came.
package openfile

import (
	"io"
	"os"
	"syscall"
)

// Open opens path for reading. A file that is not a regular one (a FIFO,
// a device) is opened non-blocking, so the open returns at once: a FIFO
// then reads as its writer writes, through the runtime's poller (where a
// read deadline ends a wait), and as empty when no writer has it open.
func Open(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().IsRegular() || st.IsDir() {
		return os.Open(path)
	}
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// ReadFile is os.ReadFile through Open.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
