package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/provebench/provebench/results"
)

// The metrics compare judges are the metric table's (results.Metrics)
// that it marks Compared, in the table's order, followed by the
// pipeline's counters: "peak_counters.<counter>" and
// "final_counters.<counter>" (see Thresholds). A metric the table marks
// Total is one figure per configuration, compared directly; the others
// have one value per measured repetition.

// total is a Total metric's figure for a configuration: the sum over its
// repetitions, warm-ups aside, of those that have it.
func total(m results.Metric, reps []results.Repetition) float64 {
	sum := 0.0
	for i := range reps {
		if reps[i].Warmup {
			continue
		}
		if v, ok := m.Value(&reps[i]); ok {
			sum += v
		}
	}
	return sum
}

// sampleOf returns a sampled metric's values over the measured
// repetitions, or why there are none.
func sampleOf(m results.Metric, reps []*results.Repetition) ([]float64, string) {
	if len(reps) == 0 {
		return nil, "no measured repetition"
	}
	vals := make([]float64, 0, len(reps))
	for _, r := range reps {
		v, ok := m.Value(r)
		if !ok {
			return nil, m.Absent
		}
		vals = append(vals, v)
	}
	return vals, ""
}

// counterNames returns the sorted union of counter names of a family over
// the measured repetitions of both sides.
func counterNames(get func(r *results.Repetition) map[string]int64, sides ...[]*results.Repetition) []string {
	names := map[string]bool{}
	for _, reps := range sides {
		for _, r := range reps {
			for k := range get(r) {
				names[k] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// counterSample returns a counter's figure in each measured repetition;
// absent when no repetition reported it.
func counterSample(reps []*results.Repetition, get func(r *results.Repetition) map[string]int64, name string) ([]float64, string) {
	if len(reps) == 0 {
		return nil, "no measured repetition"
	}
	var vals []float64
	for _, r := range reps {
		if v, ok := get(r)[name]; ok {
			vals = append(vals, float64(v))
		}
	}
	if len(vals) == 0 {
		return nil, "counter not reported"
	}
	return vals, ""
}

func peakCounters(r *results.Repetition) map[string]int64  { return r.PeakCounters }
func finalCounters(r *results.Repetition) map[string]int64 { return r.FinalCounters }

// constant reports whether every value of every sample is the same.
func constant(samples ...[]float64) bool {
	var first float64
	seen := false
	for _, s := range samples {
		for _, v := range s {
			if !seen {
				first, seen = v, true
			} else if v != first {
				return false
			}
		}
	}
	return true
}

// maxAbs is the largest magnitude of a sample: a final counter's worst
// imbalance, either sign.
func maxAbs(vals []float64) float64 {
	m := 0.0
	for _, v := range vals {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// statusCounts describes a scenario's non-warm-up repetitions by status,
// as "8 ok, 1 failed, 1 memory-limit".
func statusCounts(sc *results.Scenario) string {
	counts := map[results.Status]int{}
	for i := range sc.Repetitions {
		if !sc.Repetitions[i].Warmup {
			counts[sc.Repetitions[i].Status]++
		}
	}
	var parts []string
	if n := counts[results.StatusOK]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d ok", n))
		delete(counts, results.StatusOK)
	}
	for _, s := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	if len(parts) == 0 {
		return "no repetitions"
	}
	return strings.Join(parts, ", ")
}
