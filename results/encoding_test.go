package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// realDocument is a real CPU run (8 configurations at 2^10 and 2^12
// constraints, 3 repetitions each, sampled every 10 ms), written as
// indented schema-1 JSON by an earlier provebench.
const realDocument = "../predict/calibcache/testdata/calibration-cpu.json"

func readReal(t testing.TB) (*Run, []byte) {
	t.Helper()
	data, err := os.ReadFile(realDocument)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(realDocument, data)
	if err != nil {
		t.Fatal(err)
	}
	return r, data
}

// sampledRows counts the instants sampled over every repetition: one row
// of every series column.
func sampledRows(r *Run) int {
	n := 0
	for _, sc := range r.Scenarios {
		for _, rep := range sc.Repetitions {
			if rep.Series != nil {
				n += len(rep.Series.T)
			}
		}
	}
	return n
}

// TestCompactSize holds the compact format to its target: at most 60 bytes
// on disk per sampled row of a real document, everything else in the
// document counted in.
func TestCompactSize(t *testing.T) {
	r, plain := readReal(t)
	gz, err := Encode(r, FormatGzip)
	if err != nil {
		t.Fatal(err)
	}
	rows := sampledRows(r)
	if rows < 1000 {
		t.Fatalf("the fixture has %d sampled rows: not a real-shaped document", rows)
	}
	perRow := float64(len(gz)) / float64(rows)
	t.Logf("%d sampled rows: %.0f bytes/row indented, %.1f bytes/row compact gzip", rows, float64(len(plain))/float64(rows), perRow)
	if perRow > 60 {
		t.Errorf("%.1f bytes per sampled row, want <= 60", perRow)
	}
}

// TestFormatsRoundTrip writes a real document in both formats and reads
// each back equal, under either file name: the reader goes by content.
func TestFormatsRoundTrip(t *testing.T) {
	r, _ := readReal(t)
	dir := t.TempDir()
	for _, f := range Formats {
		data, err := Encode(r, f)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsGzip(data); got != (f == FormatGzip) {
			t.Errorf("%s: gzip %v", f, got)
		}
		for _, name := range []string{"results.json", "results.json.gz", "doc"} {
			p := filepath.Join(dir, name)
			if err := WriteFile(p, data); err != nil {
				t.Fatal(err)
			}
			back, err := Read(p)
			if err != nil {
				t.Fatalf("%s as %s: %v", f, name, err)
			}
			// Spec is raw JSON: compared as compact JSON. The fixture is
			// schema 1, written as schema 2.
			r.Schema = SchemaVersion
			want, _ := json.Marshal(r)
			got, _ := json.Marshal(back)
			if !bytes.Equal(got, want) {
				t.Errorf("%s as %s: the document changed in a write and a read", f, name)
			}
		}
	}
}

// TestWriteByName: Write picks the format from the name, as before for
// .json (indented) and gzip for .gz.
func TestWriteByName(t *testing.T) {
	r, _ := readReal(t)
	dir := t.TempDir()
	for name, gz := range map[string]bool{"a.json": false, "a.json.gz": true} {
		p := filepath.Join(dir, name)
		if err := Write(p, r); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		if IsGzip(data) != gz {
			t.Errorf("%s: gzip %v, want %v", name, IsGzip(data), gz)
		}
		if !gz && !bytes.HasPrefix(data, fmt.Appendf(nil, "{\n \"schema\": %d", SchemaVersion)) {
			t.Errorf("%s: not indented JSON: %.40q", name, data)
		}
	}
}

func TestBadGzip(t *testing.T) {
	r, _ := readReal(t)
	gz, _ := Encode(r, FormatGzip)
	for name, data := range map[string][]byte{
		"truncated": gz[:len(gz)/2],
		"header":    gz[:5],
		"corrupt":   append(append([]byte{}, gz[:20]...), bytes.Repeat([]byte{0xff}, 100)...),
	} {
		if _, err := Decode(name, data); !errors.Is(err, ErrSchema) {
			t.Errorf("%s: %v, want ErrSchema", name, err)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"json": FormatJSON, "json.gz": FormatGzip, "gzip": FormatGzip, " JSON ": FormatJSON} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("yaml"); err == nil {
		t.Error("yaml accepted")
	}
}

// BenchmarkEncode and BenchmarkDecode measure both formats on the real
// document; bytes/row is the size on disk per sampled row.
func BenchmarkEncode(b *testing.B) {
	r, _ := readReal(b)
	rows := sampledRows(r)
	for _, f := range Formats {
		b.Run(string(f), func(b *testing.B) {
			var n int
			for b.Loop() {
				data, err := Encode(r, f)
				if err != nil {
					b.Fatal(err)
				}
				n = len(data)
			}
			b.ReportMetric(float64(n)/float64(rows), "bytes/row")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	r, _ := readReal(b)
	for _, f := range Formats {
		data, err := Encode(r, f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(f), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Decode("bench", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
