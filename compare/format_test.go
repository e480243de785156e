package compare

import (
	"testing"

	"github.com/provebench/provebench/results"
)

// A figure prints at the precision it is measured to: energy in joules
// with an SI prefix, a median count to a tenth, never the float's 17 digits
// (a J/proof median once printed as 317.97249999999997).
func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit results.Unit
		want string
	}{
		{317.97249999999997, results.UnitJoule, "318.0J"},
		{1520.5, results.UnitJoule, "1.520kJ"},
		{294.5, results.UnitCount, "294.5"},
		{310, results.UnitCount, "310"},
		{0.2117, results.UnitFraction, "21.2%"},
	} {
		if got := formatValue(c.v, c.unit); got != c.want {
			t.Errorf("formatValue(%v, %s) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
