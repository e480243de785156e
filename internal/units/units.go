// Package units formats sizes for people: byte counts with binary units and
// powers of two as 2^k. (Parsing lives with the scenario format, which
// defines the accepted forms: scenarios.ParseSize and ParseCount.)
package units

import (
	"fmt"
	"math"
	"strconv"
)

// FormatBytes writes a byte count with a binary unit and three significant
// figures: 1.50 GiB, 512 MiB, 12 KiB.
func FormatBytes(n int64) string {
	neg := n < 0
	f := math.Abs(float64(n))
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	sign := ""
	if neg {
		sign = "-"
	}
	switch {
	case i == 0:
		return fmt.Sprintf("%s%d B", sign, int64(f))
	case f >= 100:
		return fmt.Sprintf("%s%.0f %s", sign, f, units[i])
	case f >= 10:
		return fmt.Sprintf("%s%.1f %s", sign, f, units[i])
	default:
		return fmt.Sprintf("%s%.2f %s", sign, f, units[i])
	}
}

// FormatCount writes powers of two of 2^10 and above as 2^k, others as
// integers.
func FormatCount(n int64) string {
	if n >= 1024 && n&(n-1) == 0 {
		k := 0
		for v := n; v > 1; v >>= 1 {
			k++
		}
		return fmt.Sprintf("2^%d", k)
	}
	return strconv.FormatInt(n, 10)
}
