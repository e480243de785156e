// Package units formats sizes for people: byte counts with binary units and
// powers of two as 2^k. (Parsing lives with the scenario format, which
// defines the accepted forms: scenarios.ParseSize and ParseCount.)
package units

import (
	"fmt"
	"math"
	"strconv"
)

// byteUnits are the binary units, each 1024 times the one before.
var byteUnits = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}

// FormatBytes writes a byte count with a binary unit and three significant
// figures: 1.50 GiB, 512 MiB, 12.0 KiB, 0 B. It is the one size formatter of
// provebench's output (console, run log, reports, compare), so that a
// figure reads the same wherever it appears.
func FormatBytes(n int64) string {
	sign := ""
	if n < 0 {
		sign = "-"
	}
	f := math.Abs(float64(n))
	if f < 1024 {
		return fmt.Sprintf("%s%d B", sign, int64(f))
	}
	div, unit := ByteScale(f)
	return sign + FormatScaled(f, div) + " " + unit
}

// ByteScale is the binary unit for figures up to max: the largest unit in
// which max is at least 1 once rounded to three figures (1023.9 KiB is
// 1.00 MiB, not 1024 KiB). Tables and axes use it to give a row or an axis
// one unit.
func ByteScale(max float64) (div float64, unit string) {
	i := 0
	f := math.Abs(max)
	for i < len(byteUnits)-1 && f >= 1023.5 {
		f /= 1024
		i++
	}
	return math.Pow(1024, float64(i)), byteUnits[i]
}

// FormatScaled writes v/div with three significant figures for values of
// 1 and more (1.50, 26.5, 512), two decimals below.
func FormatScaled(v, div float64) string {
	f := v / div
	a := math.Abs(f)
	switch {
	case a >= 99.95:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case a >= 9.995:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
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

// SecondsScale is the unit for durations up to max seconds: s, ms, µs or
// ns, the largest in which max reads at least 1.
func SecondsScale(max float64) (div float64, unit string) {
	a := math.Abs(max)
	switch {
	case a >= 0.9995 || a == 0:
		return 1, "s"
	case a >= 0.9995e-3:
		return 1e-3, "ms"
	case a >= 0.9995e-6:
		return 1e-6, "µs"
	}
	return 1e-9, "ns"
}

// FormatSeconds writes a duration in seconds with three significant
// figures and a unit: 2.85 s, 523 ms, 5.68 µs.
func FormatSeconds(v float64) string {
	if v == 0 {
		return "0 s"
	}
	div, unit := SecondsScale(v)
	return FormatScaled(v, div) + " " + unit
}

// Plural writes a count and its noun, singular for 1: "1 configuration",
// "3 configurations" (nouns whose plural adds an s).
func Plural(n int, noun string) string { return strconv.Itoa(n) + " " + Noun(n, noun) }

// Noun is the noun alone, singular for a count of 1 and plural otherwise
// ("regression", "regressions"), for a sentence that writes the count
// apart.
func Noun(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
