package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/provebench/provebench/results"
)

// Thresholds maps a metric to the relative change, in the metric's bad
// direction, beyond which a significant change is a regression: 0.05 means
// 5%; +Inf ("off") reports the metric without gating on it.
//
// Keys are the names of the metrics compare judges (the metric table's
// Compared ones) or a counter family: "peak_counters" or
// "final_counters" apply to every counter of the family, and
// "peak_counters.<name>" to one counter, overriding the family.
//
// A metric without an entry is reported but not gated, except counters:
// a final counter, or a counter peak that is the same in every repetition
// of both runs (exact), defaults to 0 (any increase is a regression), while
// a peak that varies between repetitions (timing-dependent) is gated only
// when a threshold names it or its family, so that the chance of a
// significant-looking shift in a noisy discrete figure cannot fail a job.
type Thresholds map[string]float64

// Counter families: metric names of counters are "<family>.<counter>".
const (
	PeakCounters  = "peak_counters"
	FinalCounters = "final_counters"
)

// DefaultThresholds are the metric table's default thresholds
// (results.Metric.Threshold): those of a CI gate that tolerates the
// noise of shared runners on timing (5%) and memory (10%) and none on
// correctness: a failed repetition, a failed partition or an unverified
// proof more than the baseline had is a regression. Counters have their
// defaults in Compare (see Thresholds). Timed figures (time, throughput,
// CPU time, memory) gate only where they are measured side by side (ab)
// or when asked to (Options.GateTimed). CPU time gates beside wall time
// because on a shared machine it moves far less with the neighbours' load:
// a change in the work done shows in it when wall time is too noisy to
// tell. Device time per partition gates for the same reason where it is
// a GPU's own clock: a prover change shows in it whatever the host does;
// on the CPU backend it is the host's clock and is judged as wall time is
// (quiet pairs only); between stored runs of a GPU backend it gates by default too (see
// gatesStored). Setup time, energy, device busy time and page faults are
// reported, not gated.
func DefaultThresholds() Thresholds {
	th := Thresholds{}
	for _, m := range results.MetricsFor(results.Compared) {
		if m.Gated() {
			th[m.Name] = m.Threshold
		}
	}
	return th
}

// For returns the threshold of a metric: its own entry, else its counter
// family's (+Inf when "off"); set is false when neither exists.
func (t Thresholds) For(metric string) (threshold float64, set bool) {
	if v, ok := t[metric]; ok {
		return v, true
	}
	if family, _, found := strings.Cut(metric, "."); found {
		if v, ok := t[family]; ok {
			return v, true
		}
	}
	return math.Inf(1), false
}

// forExact is For with a default of 0 (any increase) for a metric that
// has no entry: exact counters.
func (t Thresholds) forExact(metric string) float64 {
	if v, ok := t.For(metric); ok {
		return v
	}
	return 0
}

// ParseThresholds reads comma-separated metric=value pairs over the
// defaults, for example "seconds_per_proof=3%,peak_rss_bytes=off,
// peak_counters.waiting_send=50%". A value is a percentage ("5%"), a
// fraction below 1 ("0.05"), or "off" to report a metric without gating on
// it. An empty spec gives the defaults.
func ParseThresholds(spec string) (Thresholds, error) {
	th := DefaultThresholds()
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, val, ok := strings.Cut(item, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || key == "" || val == "" {
			return nil, fmt.Errorf("threshold %q: want metric=value, as seconds_per_proof=5%%", item)
		}
		if !knownMetric(key) {
			return nil, fmt.Errorf("threshold %q: unknown metric %q (known: %s, %s.<counter>, %s.<counter>)",
				item, key, strings.Join(slices.Sorted(slices.Values(results.MetricNames(results.Compared))), ", "), PeakCounters, FinalCounters)
		}
		v, err := parseThreshold(val)
		if err != nil {
			return nil, fmt.Errorf("threshold %q: %w", item, err)
		}
		th[key] = v
	}
	return th, nil
}

func parseThreshold(s string) (float64, error) {
	if s == "off" || s == "none" {
		return math.Inf(1), nil
	}
	pct, isPct := strings.CutSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("value %q: want a percentage (5%%), a fraction (0.05) or off", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("value %q: a threshold is a size of change and cannot be negative", s)
	}
	if isPct {
		return v / 100, nil
	}
	if v >= 1 {
		return 0, fmt.Errorf("value %q is ambiguous: write %s%% for a percentage, or a fraction below 1 (%g)", s, s, v/100)
	}
	return v, nil
}

// knownMetric reports whether key names a metric compare judges, or a
// counter family or counter: what a user's --threshold may name.
func knownMetric(key string) bool {
	if m, ok := results.MetricNamed(key); ok && m.In(results.Compared) {
		return true
	}
	if key == PeakCounters || key == FinalCounters {
		return true
	}
	family, counter, ok := strings.Cut(key, ".")
	return ok && counter != "" && (family == PeakCounters || family == FinalCounters)
}

// String writes the thresholds in the form ParseThresholds reads, sorted.
func (t Thresholds) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(t)) {
		parts = append(parts, k+"="+formatThreshold(t[k]))
	}
	return strings.Join(parts, ",")
}

func formatThreshold(v float64) string {
	if math.IsInf(v, 1) {
		return "off"
	}
	return strconv.FormatFloat(v*100, 'g', -1, 64) + "%"
}
