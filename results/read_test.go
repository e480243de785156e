package results

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Regression tests of issue 32 items 2, 3 and 4: every reader is bounded
// by the decompressed size and values, refuses before it allocates what a
// document expands to, and stops when its context is done.

// gzipOf compresses n bytes of pattern, repeated, then tail, as one stream.
func gzipOf(t testing.TB, pattern string, n int, tail []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat(pattern, (1<<20)/len(pattern)))
	for left := n; left > 0; left -= len(chunk) {
		if _, err := zw.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := zw.Write(tail); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// allocated is what f allocates on the heap, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// smallDocument is a valid document's compact JSON.
func smallDocument(t testing.TB) []byte {
	t.Helper()
	r, _ := readReal(t)
	r.Scenarios = r.Scenarios[:1]
	data, err := Encode(r, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Item 2: a small gzip file of zeros is refused at its first byte; one
// of whitespace past the limit, whatever follows, is counted, never kept.
// Neither costs more than a few MiB, where each used to be read whole.
func TestReadRefusesBeforeAllocating(t *testing.T) {
	zeros := gzipOf(t, "\x00", 64<<20, nil)
	var err error
	if n := allocated(func() { _, err = Decode("zeros.gz", zeros) }); !errors.Is(err, ErrSchema) || n > 8<<20 {
		t.Errorf("64 MiB of zeros in %d KiB of gzip: %v, %d MiB allocated; want ErrSchema and a few MiB at most", len(zeros)>>10, err, n>>20)
	}
	doc := smallDocument(t)
	padded := gzipOf(t, " ", MaxDocumentBytes, doc)
	if n := allocated(func() { _, err = Decode("padded.gz", padded) }); !errors.Is(err, ErrTooLarge) || n > 8<<20 {
		t.Errorf("a document behind %d MiB of whitespace: %v, %d MiB allocated; want ErrTooLarge and a few MiB at most", MaxDocumentBytes>>20, err, n>>20)
	}
	if err == nil || !strings.Contains(err.Error(), "padded.gz: more than 128 MiB of JSON (decompressed)") {
		t.Errorf("the refusal does not name the file and the limit: %v", err)
	}
	// Within the limit, whitespace before the document is read past, not
	// kept: the document decodes.
	if _, err := Decode("some.gz", gzipOf(t, " ", 16<<20, doc)); err != nil {
		t.Errorf("a document behind 16 MiB of whitespace: %v", err)
	}
}

// Item 3: a document of more values than a reader takes (a series of
// millions of points that gzip makes a few KiB) is refused by counting
// them, before any is decoded; so is a plain file past the byte limit,
// the same limit as compressed.
func TestReadBoundsValuesAndBytes(t *testing.T) {
	points := MaxDocumentValues/2 + 1
	head := `{"schema":2,"tool":"provebench","tool_version":"x","started_at":"2026-01-01T00:00:00Z","complete":true,"environment":{},` +
		`"scenarios":[{"name":"a","strategy":"hold","backend":"cpu","repetitions":[{"index":1,"status":"ok","series":{"interval_seconds":0.01,"rss_bytes_delta":[0`
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(head))
	for _, col := range []string{"", `],"t_delta_us":[0`} {
		zw.Write([]byte(col))
		chunk := []byte(strings.Repeat(",1", 1<<16))
		for left := points; left > 0; left -= 1 << 16 {
			zw.Write(chunk[:2*min(left, 1<<16)])
		}
	}
	zw.Write([]byte(`]}}]}]}`))
	zw.Close()
	var err error
	if n := allocated(func() { _, err = Decode("points.json.gz", b.Bytes()) }); !errors.Is(err, ErrTooLarge) || n > 8<<20 {
		t.Errorf("%d points in %d KiB of gzip: %v, %d MiB allocated; want ErrTooLarge and a few MiB at most", 2*points, b.Len()>>10, err, n>>20)
	}

	// A plain file one byte past the limit (sparse: no disk used).
	plain := filepath.Join(t.TempDir(), "results.json")
	f, err := os.Create(plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxDocumentBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if n := allocated(func() { _, err = Read(plain) }); !errors.Is(err, ErrTooLarge) || n > 8<<20 {
		t.Errorf("a plain file past the limit: %v, %d MiB allocated; want ErrTooLarge and a few MiB at most", err, n>>20)
	}
}

// fifo makes a named pipe and returns its path.
func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "results.json")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	return p
}

// Item 4: ReadContext stops when its context is done, whether it waits for
// a writer that sends nothing more or reads a stream without end.
func TestReadContextStops(t *testing.T) {
	for _, endless := range []bool{false, true} {
		path := fifo(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := ReadContext(ctx, path)
			done <- err
		}()
		// Opening the write end returns once the reader has opened the
		// read end: the reader has started.
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(`{"schema":2,"tool":"provebench","scenarios":[`)); err != nil {
			t.Fatal(err)
		}
		writing := make(chan struct{})
		if endless {
			go func() {
				defer close(writing)
				spaces := bytes.Repeat([]byte(" "), 1<<16)
				for {
					if _, err := w.Write(spaces); err != nil {
						return // the reader closed its end
					}
				}
			}()
		} else {
			close(writing)
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("endless %v: %v, want context.Canceled", endless, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("endless %v: ReadContext still reading 30 s after its context ended", endless)
		}
		w.Close()
		<-writing
	}
}

// The limits hold on what real documents are: every committed document is
// far below both (a 50-fold margin in bytes, 15-fold in values: a
// 40-repetition document sampled every 10 ms holds about 0.9 million).
func TestRealDocumentsAreFarBelowTheLimits(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../docs/results", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "results.json.gz" {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) < 10 {
		t.Fatalf("%d committed documents found: %v", len(files), err)
	}
	var largest, values int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		js, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, int64(len(js)))
		values = max(values, int64(bytes.Count(js, []byte{','})))
		if _, err := Decode(f, data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if largest == 0 || values == 0 {
		t.Fatal("the committed documents read as empty")
	}
	if largest*50 > MaxDocumentBytes || values*15 > MaxDocumentValues {
		t.Errorf("the largest committed document has %d bytes and %d values: the limits (%d, %d) leave it less than a 50-fold and 15-fold margin",
			largest, values, MaxDocumentBytes, MaxDocumentValues)
	}
}
