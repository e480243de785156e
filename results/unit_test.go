package results

import "testing"

// A figure prints at the precision it is measured to: energy in joules
// with an SI prefix, a median count to a tenth, never the float's 17 digits
// (a J/proof median once printed as 317.97249999999997).
func TestUnitFormat(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit Unit
		want string
	}{
		{317.97249999999997, UnitJoule, "318.0J"},
		{1520.5, UnitJoule, "1.520kJ"},
		{294.5, UnitCount, "294.5"},
		{310, UnitCount, "310"},
		{0.2117, UnitFraction, "21.2%"},
	} {
		if got := c.unit.Format(c.v); got != c.want {
			t.Errorf("%s.Format(%v) = %q, want %q", c.unit, c.v, got, c.want)
		}
	}
}
