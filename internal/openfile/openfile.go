// Package openfile opens the files provebench reads without waiting in
// open(2): a FIFO with no writer yet blocks an ordinary open where no
// signal can reach it (the runtime cannot interrupt the system call), so
// a reader given one would ignore SIGINT and SIGTERM for as long as no
// writer came.
package openfile

import (
	"context"
	"io"
	"io/fs"
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

// OpenContext opens path for reading as os.Open does, waiting for a
// FIFO's writer as os.Open does, but returns ctx's error once ctx is
// done: the open left waiting is then let go (a writer that comes and
// goes at once) and its file closed.
func OpenContext(ctx context.Context, path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeNamedPipe == 0 {
		return Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	got := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		got <- opened{f, err}
	}()
	select {
	case o := <-got:
		return o.f, o.err
	case <-ctx.Done():
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		go func() {
			if o := <-got; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
