package scenarios

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// sizeUnits are the units a size may carry. Binary (IEC) units are powers of
// 1024 and decimal (SI) units powers of 1000, as their standards define
// them; the bare and JEDEC forms (K, G, KB, Gi) are refused because readers
// disagree on what they mean, and a memory limit off by 7% is a wrong
// verdict.
var sizeUnits = []struct {
	name  string
	bytes int64
}{
	{"B", 1},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"PiB", 1 << 50},
	{"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15},
}

// maxPow2 is the largest k accepted in 2^k: 2^62 is the largest power of two
// an int64 holds.
const maxPow2 = 62

// pow2Pattern matches 2^k. It is shared by the loader and the JSON Schema.
const pow2Pattern = `^2\^[0-9]{1,2}$`

// sizePattern matches every size ParseSize accepts (ParseSize also bounds
// the value). It is built from sizeUnits and shared with the JSON Schema, so
// the two accept the same forms. It uses the subset of regular-expression
// syntax that Go's RE2 and ECMA-262 (JSON Schema's dialect) read alike.
var sizePattern = func() string {
	names := make([]string, len(sizeUnits))
	for i, u := range sizeUnits {
		names[i] = u.name
	}
	return `^(0|[1-9][0-9]*|2\^[0-9]{1,2}|[0-9]+(\.[0-9]+)?(` + strings.Join(names, "|") + `))$`
}()

var (
	sizeRE = regexp.MustCompile(sizePattern)
	pow2RE = regexp.MustCompile(pow2Pattern)
)

// ParseSize parses a byte size: a plain integer (bytes), 2^k, or a number
// with a unit, where the number may have a fraction if the result is a whole
// number of bytes. Units: B; binary KiB, MiB, GiB, TiB, PiB (powers of
// 1024); decimal kB, MB, GB, TB, PB (powers of 1000). Examples: 1024, 2^20,
// 512MiB, 16GiB, 1.5GB. Sizes are never negative.
func ParseSize(s string) (int64, error) {
	if !sizeRE.MatchString(s) {
		return 0, fmt.Errorf("size %q: %s", s, sizeHint(s))
	}
	if strings.HasPrefix(s, "2^") {
		return parsePow2(s)
	}
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q is too large", s)
		}
		return n, nil
	}
	num, unit := s, ""
	if j := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }); j >= 0 {
		num, unit = s[:j], s[j:]
	}
	var mult int64
	for _, u := range sizeUnits {
		if u.name == unit {
			mult = u.bytes
		}
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok || mult == 0 { // unreachable: sizeRE admits only these forms
		return 0, fmt.Errorf("size %q: %s", s, sizeHint(s))
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return r.Num().Int64(), nil
}

// sizeHint explains why s is not a size, guessing at the most likely slip.
func sizeHint(s string) string {
	const want = "want bytes (1024), 2^k (2^20) or a number with a unit (512MiB, 16GiB, 1.5GB)"
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return "empty; " + want
	case strings.HasPrefix(t, "-"):
		return "a size cannot be negative"
	case strings.ContainsAny(t, " \t"):
		return "write the number and unit without a space (16GiB); " + want
	}
	unit := strings.TrimLeft(t, "0123456789.")
	if unit == "" || unit == t {
		return want
	}
	// Bare prefixes, KB and Kubernetes' Ki/Gi mean different things to
	// different readers: ask, rather than guess.
	if p := strings.ToUpper(unit[:1]); strings.Contains("KMGTP", p) &&
		(len(unit) == 1 || unit == "KB" || len(unit) == 2 && unit[1] == 'i') {
		dec := p + "B"
		if p == "K" {
			dec = "kB"
		}
		return fmt.Sprintf("unit %q is ambiguous: write %siB (binary, 1024-based) or %s (decimal, 1000-based)", unit, p, dec)
	}
	for _, u := range sizeUnits {
		if strings.EqualFold(u.name, unit) {
			return fmt.Sprintf("unit %q: units are case-sensitive; did you mean %s?", unit, u.name)
		}
	}
	return fmt.Sprintf("unknown unit %q; %s", unit, want)
}

// ParseCount parses a count written as a plain integer or as 2^k (such as
// the constraints per partition, 2^24).
func ParseCount(s string) (int64, error) {
	if pow2RE.MatchString(s) {
		return parsePow2(s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%q: %w", s, errTooLarge)
		}
		return 0, fmt.Errorf("%q: want an integer or 2^k", s)
	}
	return n, nil
}

// errTooLarge marks a count beyond what an int64 holds.
var errTooLarge = errors.New("too large")

// pow2Exponent returns k when s is written 2^k.
func pow2Exponent(s string) (int, bool) {
	if !pow2RE.MatchString(s) {
		return 0, false
	}
	k, err := strconv.Atoi(strings.TrimPrefix(s, "2^"))
	return k, err == nil
}

func parsePow2(s string) (int64, error) {
	k, err := strconv.Atoi(strings.TrimPrefix(s, "2^"))
	if err != nil || k > maxPow2 {
		return 0, fmt.Errorf("%q: the exponent must be 0..%d", s, maxPow2)
	}
	return int64(1) << k, nil
}

// parseFloat parses a finite decimal number.
func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q: want a finite number", s)
	}
	return f, nil
}
