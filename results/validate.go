package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Statuses lists every status a repetition may have; a document with any
// other is refused on read.
var Statuses = []Status{StatusOK, StatusFailed, StatusMemoryLimit, StatusTimeout, StatusCrashed, StatusCancelled}

// ErrInvalid marks a document that parses but does not hold together: an
// unknown status, columns of different lengths, no scenarios.
var ErrInvalid = errors.New("invalid results document")

// ErrEmpty marks a document without scenarios: a run that stopped before
// its first configuration, with nothing to report or compare.
var ErrEmpty = fmt.Errorf("no scenarios (%w)", ErrInvalid)

// Validate checks what readers rely on: scenarios present (a shard may be
// empty: with more shards than configurations some get none, and merge
// takes them), named and unique; the run order and every status known;
// every figure finite and not negative; every series column as long as its
// time axis. It lists every problem found.
func (r *Run) Validate() error {
	if len(r.Scenarios) == 0 {
		if r.Shard != nil {
			return nil
		}
		return ErrEmpty
	}
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
	}
	if r.RunOrder != "" && r.RunOrder != RunOrderInterleaved {
		add("run_order", "%q is not %q (or absent, for sequential)", r.RunOrder, RunOrderInterleaved)
	}
	seen := make(map[string]int)
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		path := fmt.Sprintf("scenarios[%d]", i)
		if sc.Name == "" {
			add(path+".name", "missing")
		} else if first, dup := seen[sc.Name]; dup {
			add(path+".name", "%q already names scenarios[%d]", sc.Name, first)
		} else {
			seen[sc.Name] = i
		}
		sc.validate(path, add)
		for j := range sc.Repetitions {
			sc.Repetitions[j].validate(fmt.Sprintf("%s.repetitions[%d]", path, j), add)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w:\n  %s", ErrInvalid, joinLines(errs))
}

// fractionSlack is how far above 1 a fraction of time may read: busy time
// and wall time come from different clocks, read microseconds apart.
const fractionSlack = 0.05

// validate checks the scenario's summary figures and the settings in its
// spec that every reader divides or counts by: a configuration of 0
// constraints or -1 repeats was never run.
func (sc *Scenario) validate(path string, add func(path, format string, args ...any)) {
	for name, v := range map[string]int{"constraints": sc.Constraints, "partitions_per_proof": sc.Partitions, "proofs": sc.Proofs} {
		if v < 0 {
			add(path+"."+name, "%d is negative", v)
		}
	}
	if len(sc.Spec) == 0 || string(sc.Spec) == "null" {
		return
	}
	var spec struct {
		Workload struct {
			Constraints *int `json:"constraints"`
			Partitions  *int `json:"partitions"`
			Proofs      *int `json:"proofs"`
			Concurrency *int `json:"concurrency"`
		} `json:"workload"`
		Repeats *int `json:"repeats"`
		Warmups *int `json:"warmups"`
	}
	if err := json.Unmarshal(sc.Spec, &spec); err != nil {
		add(path+".spec", "not a configuration: %v", err)
		return
	}
	atLeast := func(name string, v *int, lo int) {
		if v != nil && *v < lo {
			add(path+".spec."+name, "%d is below %d", *v, lo)
		}
	}
	atLeast("workload.constraints", spec.Workload.Constraints, 1)
	atLeast("workload.partitions", spec.Workload.Partitions, 1)
	atLeast("workload.proofs", spec.Workload.Proofs, 1)
	atLeast("workload.concurrency", spec.Workload.Concurrency, 1)
	atLeast("repeats", spec.Repeats, 1)
	atLeast("warmups", spec.Warmups, 0)
}

// figure reports v unless it is a finite figure of at least 0.
func figure(path string, v float64, add func(path, format string, args ...any)) {
	if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		add(path, "%v is not a figure (negative or not finite)", v)
	}
}

// fraction reports v unless it is a fraction of time: 0 to 1, give or take
// fractionSlack above.
func fraction(path string, v float64, add func(path, format string, args ...any)) {
	if !(v >= 0 && v <= 1+fractionSlack) {
		add(path, "%v is not a fraction (0 to 1)", v)
	}
}

// validate checks one repetition: its status and measure known, every
// figure finite and not negative (a fraction at most 1, give or take
// fractionSlack), every count not negative, and its series.
func (rep *Repetition) validate(path string, add func(path, format string, args ...any)) {
	rep.validateStatus(path, add)
	rep.validateMetrics(path, add)
	rep.validateOtherFigures(path, add)
	rep.validateStages(path, add)
	rep.validateMeasure(path, add)
	rep.validateCounts(path, add)
	if s := rep.Series; s != nil {
		s.validate(path+".series", rep.ProcessSeconds, add)
	}
}

func (rep *Repetition) validateStatus(path string, add func(path, format string, args ...any)) {
	if slices.Contains(Statuses, rep.Status) {
		return
	}
	names := make([]string, len(Statuses))
	for i, s := range Statuses {
		names[i] = string(s)
	}
	add(path+".status", "%q is not one of %s", rep.Status, strings.Join(names, ", "))
}

// validateMetrics checks every stored figure of the metric table: a
// fraction as a fraction, any other as a figure.
func (rep *Repetition) validateMetrics(path string, add func(path, format string, args ...any)) {
	for _, m := range metrics {
		v, ok := m.Value(rep)
		if !ok || m.Derived {
			continue
		}
		if m.Unit == UnitFraction {
			fraction(path+"."+m.Name, v, add)
		} else {
			figure(path+"."+m.Name, v, add)
		}
	}
}

// validateOtherFigures checks the figures the metric table does not hold:
// the optional timings, the per-stage device and setup seconds, the host's
// load.
func (rep *Repetition) validateOtherFigures(path string, add func(path, format string, args ...any)) {
	for name, v := range map[string]*float64{"first_start_seconds": rep.FirstStartSeconds, "run_cpu_seconds": rep.RunCPUSeconds} {
		if v != nil {
			figure(path+"."+name, *v, add)
		}
	}
	for field, m := range map[string]map[string]float64{"device_stage_seconds": rep.DeviceStageSeconds, "setup_stages": rep.SetupStages} {
		for name, v := range m {
			figure(path+"."+field+"."+name, v, add)
		}
	}
	if h := rep.HostLoad; h != nil {
		figure(path+".host_load.load1", h.Load1, add)
		fraction(path+".host_load.steal_fraction", h.StealFraction, add)
	}
}

func (rep *Repetition) validateStages(path string, add func(path, format string, args ...any)) {
	for _, name := range sortedKeys(rep.Stages) {
		st := rep.Stages[name]
		at := path + ".stages." + name
		if st.Count < 0 {
			add(at+".count", "%d is negative", st.Count)
		}
		for field, v := range map[string]float64{"total_seconds": st.TotalSeconds, "mean_seconds": st.MeanSeconds, "p50_seconds": st.P50Seconds, "p90_seconds": st.P90Seconds, "max_seconds": st.MaxSeconds} {
			figure(at+"."+field, v, add)
		}
	}
}

// validateMeasure allows an absent measure: documents written before warm
// and cold were told apart have none.
func (rep *Repetition) validateMeasure(path string, add func(path, format string, args ...any)) {
	if rep.Measure != "" && rep.Measure != MeasureWarm && rep.Measure != MeasureCold {
		add(path+".measure", "%q is not %q or %q", rep.Measure, MeasureWarm, MeasureCold)
	}
}

func (rep *Repetition) validateCounts(path string, add func(path, format string, args ...any)) {
	for name, v := range map[string]int{"partitions": rep.Partitions, "proofs": rep.Proofs, "proofs_verified": rep.ProofsVerified} {
		if v < 0 {
			add(path+"."+name, "%d is negative", v)
		}
	}
}

// validate checks the series' columns against its time axis, and the axis
// itself: finite times in order, none before the child started (a time is
// negative only while the child set up, within its lifetime, process).
func (s *Series) validate(path string, process float64, add func(path, format string, args ...any)) {
	n := len(s.T)
	if s.IntervalSeconds != 0 {
		figure(path+".interval_seconds", s.IntervalSeconds, add)
	}
	earliest := -(process + s.IntervalSeconds + 1) // a second for the clocks' skew
	for i, t := range s.T {
		at := fmt.Sprintf("%s.t[%d]", path, i)
		switch {
		case math.IsNaN(t) || math.IsInf(t, 0):
			add(at, "%v is not a time", t)
		case t < earliest:
			add(at, "%v s is before the child started (%v s before the pipeline)", t, process)
		case i > 0 && t < s.T[i-1]:
			add(at, "%v s is before the time before it (%v s)", t, s.T[i-1])
		default:
			continue
		}
		break // one problem per axis says enough
	}
	for i, u := range s.GPUUtilization {
		if u != nil && !(*u >= 0 && *u <= 1+fractionSlack) {
			add(fmt.Sprintf("%s.gpu_utilization[%d]", path, i), "%v is not a fraction (0 to 1)", *u)
			break
		}
	}
	check := func(name string, l int, optional bool) {
		if l != n && !(optional && l == 0) {
			add(path+"."+name, "%d values for %d times", l, n)
		}
	}
	check("rss_bytes", len(s.RSSBytes), false)
	check("gpu_memory_bytes", len(s.GPUMemoryBytes), true)
	check("gpu_device_memory_bytes", len(s.GPUDeviceMemoryBytes), true)
	check("gpu_utilization", len(s.GPUUtilization), true)
	names := make([]string, 0, len(s.Counters))
	for name := range s.Counters {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		check("counters."+name, len(s.Counters[name]), false)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func joinLines(errs []error) string {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Error()
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n  ")
}
