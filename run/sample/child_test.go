//go:build linux

package sample

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// childEnv makes the test binary, re-executed, serve childMain instead of
// running tests: a process whose memory and CPU use the test controls.
const childEnv = "PROVEBENCH_SAMPLE_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := childMain(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childMain obeys one command per line and answers "ok" to each:
//
//	alloc N   map N MiB outside the Go heap and touch every page
//	free      unmap it
//	spin MS   burn MS milliseconds of user CPU time (by its own rusage)
//
// It exits when its input ends.
func childMain(in io.Reader, out io.Writer) error {
	var mem []byte
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "alloc":
			mib, err := strconv.Atoi(arg)
			if err != nil {
				return err
			}
			if mem, err = touchMapping(mib << 20); err != nil {
				return err
			}
		case "free":
			if err := unix.Munmap(mem); err != nil {
				return err
			}
			mem = nil
		case "spin":
			ms, err := strconv.Atoi(arg)
			if err != nil {
				return err
			}
			if err := spinUser(time.Duration(ms) * time.Millisecond); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
		if _, err := fmt.Fprintln(out, "ok"); err != nil {
			return err
		}
	}
	return sc.Err()
}

// touchMapping maps size bytes of anonymous memory and writes every page, so
// that all of it is resident.
func touchMapping(size int) ([]byte, error) {
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	page := os.Getpagesize()
	for i := 0; i < len(mem); i += page {
		mem[i] = 1
	}
	return mem, nil
}

// spinUser burns d of this process's user CPU time, measured by the kernel,
// however busy the machine is.
func spinUser(d time.Duration) error {
	start, err := userTime()
	if err != nil {
		return err
	}
	x := uint64(1)
	for {
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		now, err := userTime()
		if err != nil {
			return err
		}
		if now-start >= d {
			sink = x
			return nil
		}
	}
}

var sink uint64

func userTime() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano()), nil
}

// child is a running childMain.
type child struct {
	t   testing.TB
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startChild(t testing.TB) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	})
	return c
}

// do sends one command and waits for the child's "ok".
func (c *child) do(format string, args ...any) {
	c.t.Helper()
	line := fmt.Sprintf(format, args...)
	if _, err := fmt.Fprintln(c.in, line); err != nil {
		c.t.Fatalf("child %q: %v", line, err)
	}
	reply, err := c.out.ReadString('\n')
	if err != nil || reply != "ok\n" {
		c.t.Fatalf("child %q: reply %q, %v", line, reply, err)
	}
}

// exit closes the child's input and waits until it has exited, leaving it a
// zombie (not reaped), so that its pid still names it.
func (c *child) exit() {
	c.t.Helper()
	c.in.Close()
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			c.t.Fatalf("waitid: %v", err)
		}
		return
	}
}

// wait reaps the exited child.
func (c *child) wait() *os.ProcessState {
	c.t.Helper()
	if err := c.cmd.Wait(); err != nil {
		c.t.Fatalf("child: %v", err)
	}
	return c.cmd.ProcessState
}
