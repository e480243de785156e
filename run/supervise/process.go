package supervise

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// TailBuffer keeps the last Max bytes written to it: what a driver keeps
// of a process's output for its error message.
type TailBuffer struct {
	mu  sync.Mutex
	buf []byte
	Max int
}

func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.Max {
		b.buf = b.buf[len(b.buf)-b.Max:]
	}
	return len(p), nil
}

func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.TrimSpace(b.buf))
}

// DescribeExit says how a process ended, for an error message.
func DescribeExit(ps *os.ProcessState) string {
	if ps == nil {
		return "did not start"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %s", ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}
