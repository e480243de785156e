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
//	started_at, wall_seconds, ..., host_steal_fraction (the repetition's
//	scalar figures, named as in the JSON document), the metric table's
//	other stored figures (repetitionColumns),
//	peak.<counter>..., final.<counter>..., stage.<stage>.<figure>...,
//	device_stage.<stage>... (device seconds per partition),
//	setup_stage.<stage>... (setup seconds)
//
// The label, counter and stage columns are the union over the run's
// scenarios, each group sorted by name, so the same scenarios give the same
// header. A figure a repetition lacks (a GPU figure without NVML, a counter
// it did not report, the throughput of a repetition that failed) is an
// empty cell, never 0.
//
// A simulated document (provebench simulate's predictions) has one more
// column before all of these, simulated, true on every row: its rows are
// predictions, and a spreadsheet of them must not pass for measurements.

// column is one of a repetition's fixed columns: its heading and how to
// render a repetition's cell.
type column struct {
	name  string
	value func(r *Repetition) string
}

// metricColumn is a metric's column, headed by its name: the figure, or
// an empty cell where the repetition lacks it.
func metricColumn(name string) column {
	m := MetricOf(name)
	return column{m.Name, func(r *Repetition) string {
		v, ok := m.Value(r)
		if !ok {
			return ""
		}
		if m.Unit == UnitByte || m.Unit == UnitCount {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return formatFloat(v)
	}}
}

// repetitionColumns are the fixed columns of a repetition, in order: its
// identity and status, and the figures of the metric table that the
// document stores, in the order the CSV has always had them; a metric
// placed nowhere here follows them, in the table's order, so that a new
// metric is a new column without an edit here.
func repetitionColumns() []column {
	cols := []column{
		{"repetition", func(r *Repetition) string { return strconv.Itoa(r.Index) }},
		{"warmup", func(r *Repetition) string { return strconv.FormatBool(r.Warmup) }},
		{"status", func(r *Repetition) string { return string(r.Status) }},
		{"error", func(r *Repetition) string { return r.Error }},
		{"started_at", func(r *Repetition) string { return formatTime(r.StartedAt) }},
		metricColumn(WallSeconds),
		metricColumn(ProcessSeconds),
		{"partitions", func(r *Repetition) string { return strconv.Itoa(r.Partitions) }},
		metricColumn(FailedPartitions),
		{"proofs", func(r *Repetition) string { return strconv.Itoa(r.Proofs) }},
		metricColumn(PartitionsPerSecond),
		metricColumn(SecondsPerProof),
		{"verifiable", func(r *Repetition) string { return strconv.FormatBool(r.Verifiable) }},
		{"proofs_verified", func(r *Repetition) string { return strconv.Itoa(r.ProofsVerified) }},
		metricColumn(PeakRSSBytes),
		{"peak_rss_source", func(r *Repetition) string { return r.PeakRSSSource }},
		metricColumn(PeakRSSSampledBytes),
		metricColumn(PeakGPUMemoryBytes),
		metricColumn(PeakGPUDeviceMemoryBytes),
		metricColumn(MeanGPUUtilization),
		metricColumn(DeviceBusyFraction),
		metricColumn(SteadyDeviceBusyFraction),
		metricColumn(DeviceSecondsPerPartition),
		{"measure", func(r *Repetition) string { return r.Measure }},
		metricColumn(SetupSeconds),
		metricColumn(EnergyJoules),
		metricColumn(JoulesPerProof),
		metricColumn(CPUUserSeconds),
		metricColumn(CPUSystemSeconds),
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
	for _, m := range metrics {
		placed := slices.ContainsFunc(cols, func(c column) bool { return c.name == m.Name })
		if !m.Derived && !placed {
			cols = append(cols, metricColumn(m.Name))
		}
	}
	return cols
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
	layout := newCSVLayout(run)
	header := layout.header()
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write CSV header: %w", err)
	}
	row := make([]string, 0, len(header))
	for j := range run.Scenarios {
		sc := &run.Scenarios[j]
		for i := range sc.Repetitions {
			r := &sc.Repetitions[i]
			row = layout.appendRow(row[:0], sc, r)
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

// csvLayout is the CSV's columns for one run: the fixed ones, and the
// union over the run's scenarios of the names that open a column each,
// every group sorted so that the same scenarios give the same header.
type csvLayout struct {
	// lead is the simulated column, in a simulated document.
	lead    []string
	columns []column
	// labels, peaks, finals, stages, devStages and setupStages are the
	// names of the label, counter and stage columns, sorted.
	labels, peaks, finals, stages, devStages, setupStages []string
}

func newCSVLayout(run *Run) *csvLayout {
	l, p, f, s := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	ds, ss := map[string]bool{}, map[string]bool{}
	for _, sc := range run.Scenarios {
		addKeys(l, sc.Labels)
		for _, r := range sc.Repetitions {
			addKeys(p, r.PeakCounters)
			addKeys(f, r.FinalCounters)
			addKeys(s, r.Stages)
			addKeys(ds, r.DeviceStageSeconds)
			addKeys(ss, r.SetupStages)
		}
	}
	layout := &csvLayout{
		columns:     repetitionColumns(),
		labels:      slices.Sorted(maps.Keys(l)),
		peaks:       slices.Sorted(maps.Keys(p)),
		finals:      slices.Sorted(maps.Keys(f)),
		stages:      slices.Sorted(maps.Keys(s)),
		devStages:   slices.Sorted(maps.Keys(ds)),
		setupStages: slices.Sorted(maps.Keys(ss)),
	}
	if run.Simulated != nil {
		layout.lead = []string{"true"}
	}
	return layout
}

// addKeys adds m's keys to set.
func addKeys[V any](set map[string]bool, m map[string]V) {
	for k := range m {
		set[k] = true
	}
}

func (l *csvLayout) header() []string {
	header := []string{"scenario", "strategy", "backend", "key_kind", "constraints", "partitions_per_proof", "workload_proofs"}
	if l.lead != nil {
		header = append([]string{"simulated"}, header...)
	}
	header = appendPrefixed(header, "label.", l.labels)
	for _, c := range l.columns {
		header = append(header, c.name)
	}
	header = appendPrefixed(header, "peak.", l.peaks)
	header = appendPrefixed(header, "final.", l.finals)
	for _, k := range l.stages {
		for _, c := range stageColumns {
			header = append(header, "stage."+k+"."+c.name)
		}
	}
	header = appendPrefixed(header, "device_stage.", l.devStages)
	return appendPrefixed(header, "setup_stage.", l.setupStages)
}

// appendPrefixed appends each name with prefix before it.
func appendPrefixed(header []string, prefix string, names []string) []string {
	for _, k := range names {
		header = append(header, prefix+k)
	}
	return header
}

// appendRow appends repetition r of scenario sc, one cell per column of
// the header.
func (l *csvLayout) appendRow(row []string, sc *Scenario, r *Repetition) []string {
	row = append(row, l.lead...)
	row = append(row, sc.Name, sc.Strategy, sc.Backend, sc.KeyKind,
		strconv.Itoa(sc.Constraints), strconv.Itoa(sc.Partitions), strconv.Itoa(sc.Proofs))
	for _, k := range l.labels {
		row = append(row, sc.Labels[k])
	}
	for _, c := range l.columns {
		row = append(row, c.value(r))
	}
	row = appendCounters(row, l.peaks, r.PeakCounters)
	row = appendCounters(row, l.finals, r.FinalCounters)
	row = appendStages(row, l.stages, r.Stages)
	row = appendSeconds(row, l.devStages, r.DeviceStageSeconds)
	return appendSeconds(row, l.setupStages, r.SetupStages)
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

// appendStages appends stageColumns' cells for each named stage, empty
// where the repetition lacks the stage.
func appendStages(row, names []string, stages map[string]StageSummary) []string {
	for _, k := range names {
		st, ok := stages[k]
		for _, c := range stageColumns {
			if ok {
				row = append(row, c.value(st))
			} else {
				row = append(row, "")
			}
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

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}
