// Package benchenv reads the settings the prover benchmarks share
// (PROVEBENCH_BENCH_LOG, PROVEBENCH_BENCH_BIT_FRACTION), so the CPU and
// CUDA benchmarks take the same forms.
package benchenv

import (
	"os"
	"strconv"
	"strings"

	"github.com/provebench/provebench/gpu/circuit"
)

// TB is what these helpers need of a benchmark: *testing.B (any
// testing.TB) satisfies it. An interface of their own keeps this package,
// which is not a test file, from importing testing and so from linking
// testing's flags into anything that imports it.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Revision is the commit a benchmark binary was built from, set by the
// linker (mk/cuda.mk: -X ...benchenv.Revision=...), since test binaries do
// not record their VCS state; empty when not set.
var Revision string

// LogRevision logs the commit the benchmark binary was built from, so a
// committed benchmark log says what it measured.
func LogRevision(tb TB) {
	tb.Helper()
	r := Revision
	if r == "" {
		r = "unknown (built without mk/cuda.mk's -X benchenv.Revision)"
	}
	tb.Logf("benchmark binary built from commit %s", r)
}

// LogSizes returns the log2 partition sizes in PROVEBENCH_BENCH_LOG
// ("12,14,16"), or def when it is unset; a bad value fails the benchmark.
func LogSizes(tb TB, def string) []int {
	tb.Helper()
	spec := os.Getenv("PROVEBENCH_BENCH_LOG")
	if spec == "" {
		spec = def
	}
	var out []int
	for _, f := range strings.Split(spec, ",") {
		lg, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil {
			err = circuit.Params{Constraints: 1 << lg}.Validate()
		}
		if err != nil {
			tb.Fatalf("PROVEBENCH_BENCH_LOG=%q: %q: want log2 sizes %d..%d: %v",
				spec, f, circuit.MinLogConstraints, circuit.MaxLogConstraints, err)
		}
		out = append(out, lg)
	}
	return out
}

// Params is the circuit a benchmark proves at 2^lg constraints: the
// family's default bit fraction, or PROVEBENCH_BENCH_BIT_FRACTION
// (0.05..0.95) when set, so that a benchmark can follow a peer prover onto
// another member of the family (scripts/peer/bench.sh's
// PEER_BENCH_BIT_FRACTION); a bad value fails the benchmark.
func Params(tb TB, lg int) circuit.Params {
	tb.Helper()
	p := circuit.Params{Constraints: 1 << lg}
	spec := os.Getenv("PROVEBENCH_BENCH_BIT_FRACTION")
	if spec == "" {
		return p
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(spec), 64)
	if err == nil {
		p.BitsPerMille, err = circuit.BitsPerMilleFor(f)
	}
	if err != nil {
		tb.Fatalf("PROVEBENCH_BENCH_BIT_FRACTION=%q: want a share of bits in %.2f..%.2f: %v",
			spec, float64(circuit.MinBitsPerMille)/1000, float64(circuit.MaxBitsPerMille)/1000, err)
	}
	return p
}
