package supervise

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// TailBuffer keeps the last Max bytes written to it, and the first
// headKeep: what a driver keeps of a process's output for its error
// message.
type TailBuffer struct {
	mu  sync.Mutex
	buf []byte
	Max int
	// head is the first headKeep bytes written: where a Go crash says
	// what it was, before its goroutines' stacks.
	head []byte
}

// headKeep is how much of the start of a process's output a TailBuffer
// keeps beside its tail.
const headKeep = 4 << 10

func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := min(len(p), headKeep-len(b.head)); n > 0 {
		b.head = append(b.head, p[:n]...)
	}
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

// CrashLines bounds the lines of a Go crash's report Crash keeps: the
// panic or fatal error and the top of its goroutine's stack, not the
// 250-odd lines of every goroutine's.
const CrashLines = 12

// Crash is what the output says of a crash: from a Go runtime's "panic:"
// or "fatal error:" line (kept at the head of the output, however long
// the stacks after it), CrashLines lines and a note of those left out;
// the output's tail (String) where there is no such line.
func (b *TailBuffer) Crash() string {
	b.mu.Lock()
	head := string(b.head)
	b.mu.Unlock()
	lines := strings.Split(head, "\n")
	at := slices.IndexFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ")
	})
	if at < 0 {
		return b.String()
	}
	lines = lines[at:]
	if len(lines) <= CrashLines {
		return strings.TrimSpace(strings.Join(lines, "\n"))
	}
	return strings.TrimSpace(strings.Join(lines[:CrashLines], "\n")) + "\n... (the rest of the traceback left out)"
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
