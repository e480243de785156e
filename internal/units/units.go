// Package units parses and formats the human forms of sizes that scenarios
// and flags use: counts such as 2^20, byte sizes such as 16GiB.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseCount parses a non-negative count written as an integer ("1024") or a
// power of two ("2^20").
func ParseCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if base, exp, ok := strings.Cut(t, "^"); ok {
		b, err1 := strconv.ParseInt(strings.TrimSpace(base), 10, 64)
		e, err2 := strconv.ParseInt(strings.TrimSpace(exp), 10, 64)
		if err1 != nil || err2 != nil || b != 2 || e < 0 || e > 62 {
			return 0, fmt.Errorf("%q: want 2^k with 0 <= k <= 62", s)
		}
		return 1 << e, nil
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a non-negative integer or 2^k", s)
	}
	return n, nil
}

var byteUnits = []struct {
	suffix string
	mult   float64
}{
	// longest suffixes first so "GiB" is not read as "B"
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// ParseBytes parses a byte size: a count (as ParseCount) or a number with a
// unit: B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers of
// 1000). Fractions are allowed with units ("1.5GiB").
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	for _, u := range byteUnits {
		num, ok := strings.CutSuffix(t, u.suffix)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, fmt.Errorf("%q: want a size such as 512MiB, 16GiB or 2^30", s)
		}
		v := f * u.mult
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("%q: too large", s)
		}
		return int64(math.Round(v)), nil
	}
	n, err := ParseCount(t)
	if err != nil {
		return 0, fmt.Errorf("%q: want a size such as 512MiB, 16GiB or 2^30", s)
	}
	return n, nil
}

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
