package openfile

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Issue 42 case 11: a FIFO with no writer blocked os.Open in open(2),
// where no signal reaches the reader. Open returns at once, and the FIFO
// reads as empty; a regular file reads as it is.
func TestOpenDoesNotWaitForAWriter(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		data, err := ReadFile(fifo)
		if err == nil && len(data) != 0 {
			t.Errorf("read %q from a FIFO no one writes", data)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile of a FIFO without a writer still waiting after 10 s")
	}
	regular := filepath.Join(dir, "f")
	if err := os.WriteFile(regular, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(regular); err != nil || string(data) != "x" {
		t.Errorf("regular file: %q, %v", data, err)
	}
}

// OpenContext waits for a FIFO's writer as os.Open does, and stops
// waiting when its context is done.
func TestOpenContextStops(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := OpenContext(ctx, fifo)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("returned before a writer or a cancel: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("cancelled: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting 10 s after the cancel")
	}
}
