// Package benchenv reads the settings the prover benchmarks share
// (PROVEBENCH_BENCH_LOG), so the CPU and CUDA benchmarks take the same forms.
package benchenv

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/provebench/provebench/gpu/circuit"
)

// LogSizes returns the log2 partition sizes in PROVEBENCH_BENCH_LOG
// ("12,14,16"), or def when it is unset; a bad value fails the benchmark.
func LogSizes(tb testing.TB, def string) []int {
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
