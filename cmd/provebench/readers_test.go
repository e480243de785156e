package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Regression tests of issue 32 items 2 and 4: every command that reads
// results documents refuses a small file that expands past the readers'
// limits, at once, and stops reading at SIGTERM with exit 130.

// readers are the commands that read a results document, each with the
// document to read in place of DOC and a scratch folder in place of DIR.
func readers(scenario string) [][]string {
	return [][]string{
		{"report", "DOC", "-o", "DIR/report"},
		{"compare", cpuCalibrate, "DOC"},
		{"merge", "DOC", "-o", "DIR/merge"},
		{"history", "add", "--db", "DIR/history.db", "DOC"},
		{"simulate", scenario, "--calibration", "DOC", "-o", "DIR/simulate"},
		{"simulate", "--cross-validate", cpuCalibrate, "DOC"},
		{"run", scenario, "--calibration", "DOC", "-o", "DIR/run"},
	}
}

// fill puts doc and dir into a reader's arguments.
func fill(args []string, doc, dir string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "DOC", doc)
		out[i] = strings.ReplaceAll(a, "DIR", dir)
	}
	return out
}

// Item 2: 64 MiB of zeros in a 64 KiB gzip file, and a document behind
// more whitespace than the limit, are bad input to every reader, which
// says so naming the file and writes nothing.
func TestReadersRefuseSmallFilesThatExpand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	compressed := func(name string, pattern byte, n int) string {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		chunk := bytes.Repeat([]byte{pattern}, 1<<20)
		for range n >> 20 {
			zw.Write(chunk)
		}
		zw.Write([]byte(`{"schema":2,"tool":"provebench","scenarios":[]}`))
		zw.Close()
		return writeFile(t, dir, name, b.String())
	}
	for _, doc := range []string{compressed("zeros.json.gz", 0, 64<<20), compressed("padded.json.gz", ' ', 129<<20)} {
		for _, args := range readers(scen) {
			args = fill(args, doc, filepath.Join(dir, "out"))
			code, _, stderr := capture(t, args...)
			if code != exitUsage || !strings.Contains(stderr, doc+": ") {
				t.Errorf("provebench %s: exit %d, stderr %q; want %d naming %s", strings.Join(args, " "), code, stderr, exitUsage, doc)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("a refused document left output behind: %v", err)
	}
}

// Item 4: each reader, reading from a FIFO whose writer has sent part of a
// document and waits, stops at SIGTERM with exit 130.
func TestReadersStopAtSIGTERM(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	for i, args := range readers(scen) {
		fifo := filepath.Join(dir, "fifo"+string(rune('a'+i)))
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("no named pipes here: %v", err)
		}
		args = fill(args, fifo, filepath.Join(dir, "out"))
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), signalsEnv+"=1", "PROVEBENCH_CACHE="+filepath.Join(dir, "keys"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// The write end opens once the command has opened the read end:
		// it has started reading.
		opened := make(chan *os.File, 1)
		go func() {
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				opened <- w
			}
		}()
		var w *os.File
		select {
		case w = <-opened:
		case <-exited:
			// Release the writer's open, then fail.
			if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				(<-opened).Close()
				r.Close()
			}
			t.Errorf("provebench %s exited before reading: %s", strings.Join(args, " "), stderr.String())
			continue
		}
		if _, err := w.Write([]byte(`{"schema":2,"tool":"provebench","scenarios":[`)); err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("provebench %s: still reading 30 s after SIGTERM", strings.Join(args, " "))
		}
		w.Close()
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Errorf("provebench %s: exit %d after SIGTERM, want %d; stderr %s", strings.Join(args, " "), code, exitInterrupted, stderr.String())
		}
		t.Logf("%s: exit %d %v after SIGTERM", args[0], cmd.ProcessState.ExitCode(), time.Since(sent).Round(time.Millisecond))
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "out")); len(entries) > 0 {
		t.Errorf("an interrupted reader wrote %d entries", len(entries))
	}
}
