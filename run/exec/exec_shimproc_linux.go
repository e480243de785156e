//go:build linux

package exec

import (
	"bytes"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"sync"
	"syscall"
)

// How the runner starts the exec supervisor (shim_linux.go), for a
// repetition and for a setup command alike.

// pipes makes the pipes the supervisor and its processes write into.
func pipes(n int) (r, w []*os.File, err error) {
	for range n {
		pr, pw, err := os.Pipe()
		if err != nil {
			closeAll(r)
			closeAll(w)
			return nil, nil, err
		}
		r, w = append(r, pr), append(w, pw)
	}
	return r, w, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// shimProc is a started supervisor.
type shimProc struct {
	cmd     *osexec.Cmd
	exited  chan struct{} // closed once it has exited
	readers sync.WaitGroup
}

// startShim starts the supervisor on job; stdout, stderr and stream read
// what it and its processes write, each in a goroutine of its own, until
// the end (every writer gone). The caller must keep its OS thread locked
// until the supervisor has exited: the supervisor's parent-death signal
// (SIGTERM: it then ends its tree, so nothing of it outlives the runner
// however the runner dies) is sent when the thread that started it exits.
func startShim(exe string, job []byte, stdout, stderr, stream func(io.Reader)) (*shimProc, error) {
	pr, pw, err := pipes(3) // stdout, stderr, stream
	if err != nil {
		return nil, err
	}
	cmd := osexec.Command(exe, "exec-shim")
	cmd.Stdin = bytes.NewReader(job)
	cmd.Stdout, cmd.Stderr = pw[0], pw[1]
	cmd.ExtraFiles = []*os.File{pw[2]}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	err = cmd.Start()
	closeAll(pw)
	if err != nil {
		closeAll(pr)
		return nil, fmt.Errorf("start exec supervisor: %w", err)
	}
	sp := &shimProc{cmd: cmd, exited: make(chan struct{})}
	sp.readers.Add(3)
	for i, read := range []func(io.Reader){stdout, stderr, stream} {
		go func() {
			defer sp.readers.Done()
			defer pr[i].Close()
			read(pr[i])
			_, _ = io.Copy(io.Discard, pr[i]) // a reader that stopped early must not block the writers
		}()
	}
	go func() {
		_ = cmd.Wait() // the supervisor's account comes over its stream
		close(sp.exited)
	}()
	return sp, nil
}
