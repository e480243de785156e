package results

import (
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
		for j := range sc.Repetitions {
			sc.Repetitions[j].validate(fmt.Sprintf("%s.repetitions[%d]", path, j), add)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w:\n  %s", ErrInvalid, joinLines(errs))
}

func (rep *Repetition) validate(path string, add func(path, format string, args ...any)) {
	if !slices.Contains(Statuses, rep.Status) {
		names := make([]string, len(Statuses))
		for i, s := range Statuses {
			names[i] = string(s)
		}
		add(path+".status", "%q is not one of %s", rep.Status, strings.Join(names, ", "))
	}
	for name, v := range map[string]float64{
		"wall_seconds": rep.WallSeconds, "process_seconds": rep.ProcessSeconds,
		"partitions_per_second": rep.PartitionsPerSecond, "seconds_per_proof": rep.SecondsPerProof,
		"cpu_user_seconds": rep.CPUUserSeconds, "cpu_system_seconds": rep.CPUSystemSeconds,
	} {
		if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			add(path+"."+name, "%v is not a figure (negative or not finite)", v)
		}
	}
	for name, v := range map[string]*float64{
		"device_busy_fraction": rep.DeviceBusyFraction, "device_seconds_per_partition": rep.DeviceSecondsPerPartition,
		"setup_seconds": rep.SetupSeconds, "first_start_seconds": rep.FirstStartSeconds,
		"energy_joules": rep.EnergyJoules, "joules_per_proof": rep.JoulesPerProof,
	} {
		if v != nil && (*v < 0 || math.IsInf(*v, 0) || math.IsNaN(*v)) {
			add(path+"."+name, "%v is not a figure (negative or not finite)", *v)
		}
	}
	for field, m := range map[string]map[string]float64{"device_stage_seconds": rep.DeviceStageSeconds, "setup_stages": rep.SetupStages} {
		for name, v := range m {
			if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				add(path+"."+field+"."+name, "%v is not a figure (negative or not finite)", v)
			}
		}
	}
	if rep.Measure != "" && rep.Measure != MeasureWarm && rep.Measure != MeasureCold {
		add(path+".measure", "%q is not %q or %q", rep.Measure, MeasureWarm, MeasureCold)
	}
	for name, v := range map[string]int{"partitions": rep.Partitions, "failed_partitions": rep.FailedPartitions, "proofs": rep.Proofs, "proofs_verified": rep.ProofsVerified} {
		if v < 0 {
			add(path+"."+name, "%d is negative", v)
		}
	}
	if s := rep.Series; s != nil {
		s.validate(path+".series", add)
	}
}

func (s *Series) validate(path string, add func(path, format string, args ...any)) {
	n := len(s.T)
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

func joinLines(errs []error) string {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Error()
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n  ")
}
