package results

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/provebench/provebench/internal/openfile"
)

// What a reader takes from one document. A results document is read whole
// into memory, then decoded into figures that take some 10 to 40 bytes a
// JSON value while a report draws them; gzip makes a document of one
// repeated value (a run of zero deltas) a thousand times smaller than its
// JSON. So both are bounded on the JSON as decompressed, whatever the
// compression, and before anything of the size is allocated: a document is
// read twice where it can be (a file: once to count, once to keep), else
// counted as it is kept.
const (
	// MaxDocumentBytes bounds a document's JSON, decompressed, whitespace
	// included: 128 MiB, many times the largest document committed under
	// docs/results, compact or indented (an indented document takes
	// several times a compact one's bytes for a sampled instant).
	// docs/reference.md (after the exit statuses) has the figures it was
	// set by.
	MaxDocumentBytes = 128 << 20
	// MaxDocumentValues bounds a document's JSON values (each number of a
	// series, each field of a repetition), counted by the commas between
	// them before any is decoded: 2^24 (16.8 million), many times the
	// largest committed document's. It bounds, together, the points of a
	// series, the repetitions and the configurations, and so what a small
	// file can cost a reader, whose memory follows the values it decodes,
	// not the file's bytes.
	MaxDocumentValues = 1 << 24
)

// ErrTooLarge marks a document past MaxDocumentBytes or MaxDocumentValues.
var ErrTooLarge = errors.New("too large for a results document")

// Read loads a results document, checking its schema version and that it
// holds together (Run.Validate), within MaxDocumentBytes and
// MaxDocumentValues.
func Read(path string) (*Run, error) { return ReadContext(context.Background(), path) }

// ReadContext is Read that stops when ctx is done, returning ctx's error:
// between chunks of the file (a read blocked on a pipe or FIFO included)
// and, once the JSON is in memory, at once, leaving the decoding it
// abandons to end on its own (bounded by the limits).
func ReadContext(ctx context.Context, path string) (*Run, error) {
	f, err := openfile.OpenContext(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A pipe or FIFO is read through the runtime's poller, where a
	// deadline ends a read that waits for a writer; a regular file's
	// reads never wait, and the deadline is refused (and not needed).
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	defer stop()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var data []byte
	if st.Mode().IsRegular() {
		data, err = readTwice(ctx, path, f)
	} else {
		data, err = readOnce(ctx, path, f)
	}
	if err != nil {
		return nil, err
	}
	return decodeContext(ctx, path, data)
}

// Decode parses a results document held in memory, plain JSON or
// gzip-compressed (recognised by its magic bytes, whatever the name),
// within the limits of Read, and validates it (Run.Validate); name is used
// in error messages.
func Decode(name string, data []byte) (*Run, error) {
	js, err := readTwice(context.Background(), name, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return decode(name, js)
}

// readTwice returns the JSON of a document that can be read again: once
// to count it against the limits, discarding what it reads, then once
// into a buffer of the size counted.
func readTwice(ctx context.Context, name string, src io.ReadSeeker) ([]byte, error) {
	js, err := jsonStream(ctx, name, src)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, js); err != nil {
		return nil, err
	}
	n := js.kept
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if js, err = jsonStream(ctx, name, src); err != nil {
		return nil, err
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(js, data); err != nil {
		return nil, changed(name, err)
	}
	if k, err := js.Read(make([]byte, 1)); k > 0 || !errors.Is(err, io.EOF) {
		return nil, changed(name, err)
	}
	return data, nil
}

// changed is the error of a file whose second reading differs from the
// first.
func changed(name string, err error) error {
	if err == nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: changed while it was read", name)
	}
	return err
}

// readOnce returns the JSON of a document that can be read only once (a
// pipe, a FIFO, a device): kept as it is counted, so at most
// MaxDocumentBytes is held before a document past it is refused.
func readOnce(ctx context.Context, name string, src io.Reader) ([]byte, error) {
	js, err := jsonStream(ctx, name, src)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(js)
}

// jsonStream is the JSON of a document read from src, decompressed when
// it starts with gzip's magic bytes (concatenated members read as one
// stream, as gzip(1) does), counted against the limits.
func jsonStream(ctx context.Context, name string, src io.Reader) (*boundedJSON, error) {
	in := bufio.NewReader(&ctxReader{ctx: ctx, r: src})
	var r io.Reader = in
	if magic, _ := in.Peek(len(gzipMagic)); IsGzip(magic) {
		zr, err := gzip.NewReader(in)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s: gzip: %w (%w)", name, err, ErrSchema)
		}
		r = zr
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return &boundedJSON{ctx: ctx, name: name, r: r}, nil
}

// ctxReader ends reading with ctx's error once ctx is done, between reads
// and after one that its deadline interrupted.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	if err != nil && c.ctx.Err() != nil {
		return n, c.ctx.Err()
	}
	return n, err
}

// boundedJSON passes a document's JSON on, counting its bytes and values
// against the limits, refusing at once a stream whose first byte after
// whitespace does not open an object (a results document is one), and
// stopping when ctx is done: a gzip stream that expands a thousandfold
// spends its time here, not in reading the file. Whitespace before the
// document counts against the limit but is not passed on, so a reader that
// keeps what it reads does not keep that.
type boundedJSON struct {
	ctx     context.Context
	name    string
	r       io.Reader
	n       int64 // bytes read, whitespace before the document included
	kept    int64 // bytes passed on
	values  int64 // commas passed on: values less one per array and object
	started bool  // the first byte after whitespace was seen
}

func (b *boundedJSON) Read(p []byte) (int, error) {
	for {
		if err := b.ctx.Err(); err != nil {
			return 0, err
		}
		n, err := b.r.Read(p)
		if b.ctx.Err() != nil {
			return 0, b.ctx.Err()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			err = fmt.Errorf("%s: %w (%w)", b.name, err, ErrSchema)
		}
		b.n += int64(n)
		chunk := p[:n]
		if !b.started {
			chunk = bytes.TrimLeft(chunk, " \t\r\n")
			if len(chunk) > 0 && chunk[0] != '{' {
				return 0, fmt.Errorf("%s: not a JSON object: starts with %q (%w)", b.name, chunk[0], ErrSchema)
			}
			b.started = len(chunk) > 0
			n = copy(p, chunk)
		}
		b.kept += int64(n)
		b.values += int64(bytes.Count(p[:n], []byte{','}))
		switch {
		case b.n > MaxDocumentBytes:
			return 0, fmt.Errorf("%s: more than %d MiB of JSON (decompressed): %w (at most %d MiB): sample less often (--sample-interval) or split the sweep (run --filter, --shard)",
				b.name, MaxDocumentBytes>>20, ErrTooLarge, MaxDocumentBytes>>20)
		case b.values > MaxDocumentValues:
			return 0, fmt.Errorf("%s: more than %d JSON values (series points, fields): %w (at most %d): sample less often (--sample-interval) or split the sweep (run --filter, --shard)",
				b.name, int64(MaxDocumentValues), ErrTooLarge, int64(MaxDocumentValues))
		case n == 0 && err == nil:
			continue // whitespace alone, not passed on
		}
		return n, err
	}
}

// decodeContext decodes data, returning ctx's error at once when ctx is
// done first: the JSON is in memory and within the limits, so the
// decoding abandoned ends on its own, in seconds at most.
func decodeContext(ctx context.Context, name string, data []byte) (*Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type decoded struct {
		run *Run
		err error
	}
	done := make(chan decoded, 1)
	go func() {
		r, err := decode(name, data)
		done <- decoded{r, err}
	}()
	select {
	case d := <-done:
		return d.run, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// decode parses a document's JSON, checking its schema version first (so
// that a document of another version says so, rather than naming a field
// this version does not know), and validates it.
func decode(name string, data []byte) (*Run, error) {
	var head struct {
		Schema *int   `json:"schema"`
		Tool   string `json:"tool"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: %w (%w)", name, err, ErrSchema)
	}
	if head.Schema == nil || head.Tool != "provebench" {
		return nil, fmt.Errorf("%s: no provebench schema field (%w)", name, ErrSchema)
	}
	if !ReadsSchema(*head.Schema) {
		return nil, fmt.Errorf("%s: schema %d, this provebench reads 1 and %d (%w)", name, *head.Schema, SchemaVersion, ErrSchema)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Run
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w (%w)", name, err, ErrSchema)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: data after the document (%w)", name, ErrSchema)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &r, nil
}
