package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"
)

// CSV layout: one row per repetition (warm-ups and failures included, so
// that a spreadsheet shows what happened; filter on the warmup and status
// columns for what statistics use). Columns come in a fixed order:
//
//	scenario, strategy, backend, key_kind, constraints, partitions_per_proof,
//	workload_proofs, label.<key>..., repetition, warmup, status, error,
//	started_at, wall_seconds, ..., cpu_system_seconds (the repetition's
//	scalar figures, named as in the JSON document),
//	peak.<counter>..., final.<counter>..., stage.<stage>.<figure>...,
//	device_stage.<stage>... (device seconds per partition),
//	setup_stage.<stage>... (setup seconds)
//
// The label, counter and stage columns are the union over the run's
// scenarios, each group sorted by name, so the same scenarios give the same
// header. A figure a repetition lacks (a GPU figure without NVML, a counter
// it did not report) is an empty cell, never 0.
//
// A simulated document (provebench simulate's predictions) has one more
// column before all of these, simulated, true on every row: its rows are
// predictions, and a spreadsheet of them must not pass for measurements.

// repetitionColumns are the fixed columns of a repetition's scalar figures,
// in order, with how to render each.
var repetitionColumns = []struct {
	name  string
	value func(r *Repetition) string
}{
	{"repetition", func(r *Repetition) string { return strconv.Itoa(r.Index) }},
	{"warmup", func(r *Repetition) string { return strconv.FormatBool(r.Warmup) }},
	{"status", func(r *Repetition) string { return string(r.Status) }},
	{"error", func(r *Repetition) string { return r.Error }},
	{"started_at", func(r *Repetition) string { return formatTime(r.StartedAt) }},
	{"wall_seconds", func(r *Repetition) string { return formatFloat(r.WallSeconds) }},
	{"process_seconds", func(r *Repetition) string { return formatFloat(r.ProcessSeconds) }},
	{"partitions", func(r *Repetition) string { return strconv.Itoa(r.Partitions) }},
	{"failed_partitions", func(r *Repetition) string { return strconv.Itoa(r.FailedPartitions) }},
	{"proofs", func(r *Repetition) string { return strconv.Itoa(r.Proofs) }},
	{"partitions_per_second", func(r *Repetition) string { return formatFloat(r.PartitionsPerSecond) }},
	{"seconds_per_proof", func(r *Repetition) string { return formatFloat(r.SecondsPerProof) }},
	{"verifiable", func(r *Repetition) string { return strconv.FormatBool(r.Verifiable) }},
	{"proofs_verified", func(r *Repetition) string { return strconv.Itoa(r.ProofsVerified) }},
	{"peak_rss_bytes", func(r *Repetition) string { return strconv.FormatUint(r.PeakRSSBytes, 10) }},
	{"peak_rss_source", func(r *Repetition) string { return r.PeakRSSSource }},
	{"peak_rss_sampled_bytes", func(r *Repetition) string { return strconv.FormatUint(r.PeakRSSSampledBytes, 10) }},
	{"peak_gpu_memory_bytes", func(r *Repetition) string { return formatUintPtr(r.PeakGPUMemoryBytes) }},
	{"peak_gpu_device_memory_bytes", func(r *Repetition) string { return formatUintPtr(r.PeakGPUDeviceMemoryBytes) }},
	{"mean_gpu_utilization", func(r *Repetition) string { return formatFloatPtr(r.MeanGPUUtilization) }},
	{"device_busy_fraction", func(r *Repetition) string { return formatFloatPtr(r.DeviceBusyFraction) }},
	{"steady_device_busy_fraction", func(r *Repetition) string {
		if r.SteadyDeviceBusyFraction == nil {
			return ""
		}
		return formatFloat(*r.SteadyDeviceBusyFraction)
	}},
	{"device_seconds_per_partition", func(r *Repetition) string { return formatFloatPtr(r.DeviceSecondsPerPartition) }},
	{"measure", func(r *Repetition) string { return r.Measure }},
	{"setup_seconds", func(r *Repetition) string { return formatFloatPtr(r.SetupSeconds) }},
	{"energy_joules", func(r *Repetition) string { return formatFloatPtr(r.EnergyJoules) }},
	{"joules_per_proof", func(r *Repetition) string { return formatFloatPtr(r.JoulesPerProof) }},
	{"cpu_user_seconds", func(r *Repetition) string { return formatFloat(r.CPUUserSeconds) }},
	{"cpu_system_seconds", func(r *Repetition) string { return formatFloat(r.CPUSystemSeconds) }},
	{"host_load1", func(r *Repetition) string {
		if r.HostLoad == nil {
			return ""
		}
		return formatFloat(r.HostLoad.Load1)
	}},
	{"host_steal_fraction", func(r *Repetition) string {
		if r.HostLoad == nil {
			return ""
		}
		return formatFloat(r.HostLoad.StealFraction)
	}},
}

// stageColumns are the figures written for every stage.
var stageColumns = []struct {
	name  string
	value func(s StageSummary) string
}{
	{"count", func(s StageSummary) string { return strconv.Itoa(s.Count) }},
	{"total_seconds", func(s StageSummary) string { return formatFloat(s.TotalSeconds) }},
	{"mean_seconds", func(s StageSummary) string { return formatFloat(s.MeanSeconds) }},
	{"p50_seconds", func(s StageSummary) string { return formatFloat(s.P50Seconds) }},
	{"p90_seconds", func(s StageSummary) string { return formatFloat(s.P90Seconds) }},
	{"max_seconds", func(s StageSummary) string { return formatFloat(s.MaxSeconds) }},
}

// WriteCSV writes the run as CSV, one row per repetition, with a header.
func WriteCSV(w io.Writer, run *Run) error {
	var labels, peaks, finals, stages, devStages, setupStages []string
	{
		l, p, f, s := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
		ds, ss := map[string]bool{}, map[string]bool{}
		for _, sc := range run.Scenarios {
			for k := range sc.Labels {
				l[k] = true
			}
			for _, r := range sc.Repetitions {
				for k := range r.PeakCounters {
					p[k] = true
				}
				for k := range r.FinalCounters {
					f[k] = true
				}
				for k := range r.Stages {
					s[k] = true
				}
				for k := range r.DeviceStageSeconds {
					ds[k] = true
				}
				for k := range r.SetupStages {
					ss[k] = true
				}
			}
		}
		devStages = slices.Sorted(maps.Keys(ds))
		setupStages = slices.Sorted(maps.Keys(ss))
		labels = slices.Sorted(maps.Keys(l))
		peaks = slices.Sorted(maps.Keys(p))
		finals = slices.Sorted(maps.Keys(f))
		stages = slices.Sorted(maps.Keys(s))
	}

	var lead []string // the simulated column, in a simulated document
	if run.Simulated != nil {
		lead = []string{"true"}
	}
	header := []string{"scenario", "strategy", "backend", "key_kind", "constraints", "partitions_per_proof", "workload_proofs"}
	if lead != nil {
		header = append([]string{"simulated"}, header...)
	}
	for _, k := range labels {
		header = append(header, "label."+k)
	}
	for _, c := range repetitionColumns {
		header = append(header, c.name)
	}
	for _, k := range peaks {
		header = append(header, "peak."+k)
	}
	for _, k := range finals {
		header = append(header, "final."+k)
	}
	for _, k := range stages {
		for _, c := range stageColumns {
			header = append(header, "stage."+k+"."+c.name)
		}
	}
	for _, k := range devStages {
		header = append(header, "device_stage."+k)
	}
	for _, k := range setupStages {
		header = append(header, "setup_stage."+k)
	}

	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write CSV header: %w", err)
	}
	row := make([]string, 0, len(header))
	for _, sc := range run.Scenarios {
		for i := range sc.Repetitions {
			r := &sc.Repetitions[i]
			row = append(row[:0], lead...)
			row = append(row, sc.Name, sc.Strategy, sc.Backend, sc.KeyKind,
				strconv.Itoa(sc.Constraints), strconv.Itoa(sc.Partitions), strconv.Itoa(sc.Proofs))
			for _, k := range labels {
				row = append(row, sc.Labels[k])
			}
			for _, c := range repetitionColumns {
				row = append(row, c.value(r))
			}
			row = appendCounters(row, peaks, r.PeakCounters)
			row = appendCounters(row, finals, r.FinalCounters)
			for _, k := range stages {
				st, ok := r.Stages[k]
				for _, c := range stageColumns {
					if ok {
						row = append(row, c.value(st))
					} else {
						row = append(row, "")
					}
				}
			}
			row = appendSeconds(row, devStages, r.DeviceStageSeconds)
			row = appendSeconds(row, setupStages, r.SetupStages)
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("write CSV row for %s repetition %d: %w", sc.Name, r.Index, err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}

// WriteCSVFile writes the run's CSV to path atomically.
func WriteCSVFile(path string, run *Run) error {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, run); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return WriteFile(path, buf.Bytes())
}

func appendCounters(row, names []string, counters map[string]int64) []string {
	for _, k := range names {
		if v, ok := counters[k]; ok {
			row = append(row, strconv.FormatInt(v, 10))
		} else {
			row = append(row, "")
		}
	}
	return row
}

// appendSeconds appends one cell per name: the figure, or empty where the
// repetition lacks it.
func appendSeconds(row, names []string, secs map[string]float64) []string {
	for _, k := range names {
		if v, ok := secs[k]; ok {
			row = append(row, formatFloat(v))
		} else {
			row = append(row, "")
		}
	}
	return row
}

// formatFloat writes the shortest representation that reads back exactly.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func formatFloatPtr(v *float64) string {
	if v == nil {
		return ""
	}
	return formatFloat(*v)
}

func formatUintPtr(v *uint64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatUint(*v, 10)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}
