package results

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecode feeds the results reader arbitrary bytes (seeds:
// testdata/fuzz). It must not panic; what it accepts must be valid and must
// survive a write and a read unchanged.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode("fuzz.json", data)
		if err != nil {
			if !errors.Is(err, ErrSchema) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error outside ErrSchema and ErrInvalid: %v", err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted an invalid document: %v", err)
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("accepted a document it cannot write: %v", err)
		}
		r2, err := Decode("again.json", again)
		if err != nil {
			t.Fatalf("cannot read what it wrote: %v", err)
		}
		third, _ := json.Marshal(r2)
		if string(third) != string(again) {
			t.Fatalf("a write and read changed the document:\n%s\n%s", again, third)
		}
	})
}
