package config

import (
	"encoding/json"
	"time"

	"github.com/provebench/provebench/internal/units"
)

// pacerJSON writes PacerConfig's Interval with its unit ("20ms"); reading
// also accepts the bare nanoseconds of documents written before.
type pacerJSON struct {
	plainPacer
	Interval units.Duration `json:"interval"`
}

type plainPacer PacerConfig // PacerConfig without its JSON methods

// MarshalJSON writes the interval as a string with its unit.
func (c PacerConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(pacerJSON{plainPacer(c), units.Duration(c.Interval)})
}

// UnmarshalJSON reads the interval as a string or nanoseconds.
func (c *PacerConfig) UnmarshalJSON(b []byte) error {
	var j pacerJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = PacerConfig(j.plainPacer)
	c.Interval = time.Duration(j.Interval)
	return nil
}
