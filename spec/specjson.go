package spec

import (
	"encoding/json"
	"time"

	"github.com/provebench/provebench/internal/units"
)

// specJSON is Spec as JSON with its durations written with their unit
// ("10ms", "2m0s"): the outer fields shadow the embedded ones of the same
// name. Reading accepts those strings and the bare nanoseconds of
// documents written before.
type specJSON struct {
	plainSpec
	SampleInterval units.Duration `json:"sample_interval"`
	Timeout        units.Duration `json:"timeout"`
}

type plainSpec Spec // Spec without its JSON methods

// MarshalJSON writes the spec with durations as strings.
func (s Spec) MarshalJSON() ([]byte, error) {
	return json.Marshal(specJSON{plainSpec(s), units.Duration(s.SampleInterval), units.Duration(s.Timeout)})
}

// UnmarshalJSON reads a spec, durations as strings or nanoseconds.
func (s *Spec) UnmarshalJSON(b []byte) error {
	var j specJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Spec(j.plainSpec)
	s.SampleInterval, s.Timeout = time.Duration(j.SampleInterval), time.Duration(j.Timeout)
	return nil
}
