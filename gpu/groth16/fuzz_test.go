package groth16

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/provebench/provebench/gpu/circuit"
)

// FuzzLoadKey feeds the key-file decoder arbitrary files (seeds:
// testdata/fuzz: the headers of real keys at 2^5, cut and altered ones). A
// file is head, padded with zeros to the header's page, then pages pages of
// point data: the fuzzer works on the header, where the decoder decides,
// without dragging tens of kilobytes of points through every mutation. The
// decoder must not panic or map past the file; a key it accepts must fit
// its circuit.
func FuzzLoadKey(f *testing.F) {
	f.Fuzz(func(t *testing.T, head []byte, pages uint16) {
		data := head
		if len(head) <= keyHeaderSize {
			data = make([]byte, keyHeaderSize+int(pages%64)*keyHeaderSize)
			copy(data, head)
		}
		path := filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pk, vk, err := LoadKey(path)
		if err != nil {
			if !errors.Is(err, ErrKeyFormat) {
				t.Fatalf("error outside ErrKeyFormat: %v", err)
			}
			return
		}
		defer pk.Close()
		if err := pk.CheckShape(); err != nil {
			t.Fatalf("accepted a key that does not fit: %v", err)
		}
		if vk != nil && len(vk.IC) != 1+circuit.NumPublic {
			t.Fatalf("setup key with %d IC points", len(vk.IC))
		}
	})
}
