package results

import (
	"fmt"
	"math"
	"strconv"

	"golang.org/x/perf/benchunit"

	"github.com/provebench/provebench/internal/units"
)

// Format writes a figure of this unit as every table, verdict and report
// prints it, with benchstat's scaling: binary prefixes for bytes, SI ones
// for seconds, rates and energy, a fraction as a percentage.
func (u Unit) Format(v float64) string {
	switch u {
	case UnitSecond:
		return benchunit.Scale(v, benchunit.Decimal) + "s"
	case UnitPartitionRate:
		return benchunit.Scale(v, benchunit.Decimal)
	case UnitByte:
		return units.FormatBytes(int64(v))
	case UnitFraction:
		return fmt.Sprintf("%.1f%%", 100*v)
	case UnitJoule:
		return benchunit.Scale(v, benchunit.Decimal) + "J"
	}
	// Counts: whole ones as they are, a median between two to a tenth
	// (never a float's 17 digits).
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
