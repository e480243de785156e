package results_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// table is the metric table, asserted non-empty: a test over no metrics
// would pass on nothing.
func table(t *testing.T) []results.Metric {
	t.Helper()
	ms := results.Metrics()
	if len(ms) == 0 {
		t.Fatal("the metric table is empty")
	}
	return ms
}

// TestMetricTableInvariants: every entry says everything its readers
// need, names are unique, and a threshold of 0 (any increase fails) is
// kept for failures.
func TestMetricTableInvariants(t *testing.T) {
	units := []results.Unit{results.UnitSecond, results.UnitPartitionRate, results.UnitByte,
		results.UnitFraction, results.UnitCount, results.UnitJoule}
	names, benches := map[string]bool{}, map[string]bool{}
	for _, m := range table(t) {
		if m.Name == "" || names[m.Name] {
			t.Errorf("metric %q: empty or repeated name", m.Name)
		}
		names[m.Name] = true
		if m.Label == "" || m.Heading == "" {
			t.Errorf("%s: label %q, heading %q: both are shown to people", m.Name, m.Label, m.Heading)
		}
		if !slices.Contains(units, m.Unit) {
			t.Errorf("%s: unit %q is not one of %v", m.Name, m.Unit, units)
		}
		if m.Better != results.LowerIsBetter && m.Better != results.HigherIsBetter {
			t.Errorf("%s: no direction (%d)", m.Name, m.Better)
		}
		switch m.Kind {
		case results.Exact:
			if m.Clock != "" {
				t.Errorf("%s: an exact count read on the %s clock", m.Name, m.Clock)
			}
		case results.Timed:
			if !slices.Contains([]results.Clock{"", results.WallClock, results.CPUClock, results.DeviceClock}, m.Clock) {
				t.Errorf("%s: clock %q", m.Name, m.Clock)
			}
		default:
			t.Errorf("%s: kind %q is neither exact nor timed", m.Name, m.Kind)
		}
		switch th := m.Threshold; {
		case math.IsInf(th, 1):
		case th == 0:
			// Any increase fails: only a count of failures may say so,
			// and a timed figure left at 0 is a forgotten threshold.
			if m.Kind != results.Exact || !m.Total {
				t.Errorf("%s: threshold 0 on a figure that is not an exact total (set it, or +Inf)", m.Name)
			}
		case !(th > 0 && th < 1):
			t.Errorf("%s: threshold %g is not +Inf, 0 or a fraction below 1", m.Name, th)
		}
		if m.Value == nil || m.Absent == "" {
			t.Errorf("%s: no Value, or no reason for its absence", m.Name)
		}
		if m.Bench != "" && benches[m.Bench] {
			t.Errorf("%s: benchmark unit %q used twice", m.Name, m.Bench)
		}
		benches[m.Bench] = true
		if m.BenchScale < 0 || m.BenchScale != 0 && m.Bench == "" {
			t.Errorf("%s: bench scale %g (unit %q)", m.Name, m.BenchScale, m.Bench)
		}
		if got, ok := results.MetricNamed(m.Name); !ok || got.Name != m.Name {
			t.Errorf("%s: MetricNamed finds %q, %v", m.Name, got.Name, ok)
		}
		if max := m.Max(); !(max > 0) || math.IsInf(max*365*100, 0) {
			t.Errorf("%s: bound %g", m.Name, max)
		}
	}
	if _, ok := results.MetricNamed("seconds_per_proof_typo"); ok {
		t.Error("an unknown name found")
	}
}

// TestZeroRepetitionHasNoFigure: absent stays absent. A repetition that
// recorded nothing has no figure of any metric, not a 0 of each.
func TestZeroRepetitionHasNoFigure(t *testing.T) {
	var zero results.Repetition
	for _, m := range table(t) {
		if v, ok := m.Value(&zero); ok {
			t.Errorf("%s: a zero repetition reads %g, want absent", m.Name, v)
		}
	}
}

// TestStoredMetricsReadTheirField: a metric the document stores is named
// as its JSON field, and its Value reads that field; a derived one is no
// field of the document.
func TestStoredMetricsReadTheirField(t *testing.T) {
	fields := map[string]bool{}
	rt := reflect.TypeFor[results.Repetition]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		fields[name] = true
	}
	stored := 0
	for _, m := range table(t) {
		if m.Derived {
			if fields[m.Name] {
				t.Errorf("%s: marked derived, but the document stores it", m.Name)
			}
			continue
		}
		stored++
		if !fields[m.Name] {
			t.Errorf("%s: marked stored, but no field of results.Repetition has that JSON name", m.Name)
			continue
		}
		want := 7.0
		if m.Unit == results.UnitFraction {
			want = 0.5
		}
		var r results.Repetition
		doc, err := json.Marshal(map[string]any{"status": "ok", m.Name: want})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(doc, &r); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if v, ok := m.Value(&r); !ok || v != want {
			t.Errorf("%s: a repetition whose %s is %g reads %g, %v", m.Name, m.Name, want, v, ok)
		}
	}
	if stored == 0 {
		t.Fatal("no stored metric")
	}
}

// TestEveryStoredMetricIsACSVColumn: the CSV writes every figure the
// document stores, each in the column of its name, a new metric without
// an edit of csv.go.
func TestEveryStoredMetricIsACSVColumn(t *testing.T) {
	var buf bytes.Buffer
	rep := results.Repetition{Index: 1, Status: results.StatusOK}
	run := &results.Run{Scenarios: []results.Scenario{{Name: "s", Repetitions: []results.Repetition{rep}}}}
	if err := results.WriteCSV(&buf, run); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for _, m := range table(t) {
		j := slices.Index(rows[0], m.Name)
		_, has := m.Value(&rep)
		switch {
		case m.Derived && j >= 0:
			t.Errorf("%s: derived, but a CSV column", m.Name)
		case !m.Derived && j < 0:
			t.Errorf("%s: stored, but no CSV column", m.Name)
		case j >= 0 && !has && rows[1][j] != "":
			t.Errorf("%s: a repetition without the figure reads %q, want an empty cell", m.Name, rows[1][j])
		case j >= 0 && has && rows[1][j] == "":
			t.Errorf("%s: a repetition with the figure reads an empty cell", m.Name)
		}
	}
}

// TestBenchfmtWritesTheTable: every metric with a benchmark unit is
// written in it, scaled, and benchstat is told which units rise for the
// better.
func TestBenchfmtWritesTheTable(t *testing.T) {
	rep := results.Repetition{Index: 1, Status: results.StatusOK, Proofs: 1}
	benched := 0
	for _, m := range table(t) {
		if m.Bench == "" || m.Derived {
			continue
		}
		benched++
		doc, _ := json.Marshal(map[string]any{m.Name: 0.5})
		if m.Unit == results.UnitByte || m.Unit == results.UnitCount {
			doc, _ = json.Marshal(map[string]any{m.Name: 5})
		}
		if err := json.Unmarshal(doc, &rep); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
	}
	if benched == 0 {
		t.Fatal("no metric with a benchmark unit")
	}
	var buf bytes.Buffer
	if err := results.WriteBenchfmt(&buf, &results.Run{Scenarios: []results.Scenario{{Name: "s", Repetitions: []results.Repetition{rep}}}}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, m := range table(t) {
		if m.Bench == "" || m.Derived {
			continue
		}
		v, ok := m.Value(&rep)
		if !ok {
			t.Fatalf("%s: not set", m.Name)
		}
		line := " " + strconv.FormatFloat(m.BenchValue(v), 'g', -1, 64) + " " + m.Bench
		if !strings.Contains(out, line) {
			t.Errorf("%s: %q not in\n%s", m.Name, line, out)
		}
		if m.Better == results.HigherIsBetter && !strings.Contains(out, "Unit "+m.Bench+" better=higher") {
			t.Errorf("%s: benchstat not told that higher is better", m.Name)
		}
	}
}

// TestMetricOfPanicsOnUnknown: a reader naming a metric the table lacks
// is a programming error, caught at once.
func TestMetricOfPanicsOnUnknown(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MetricOf of an unknown name did not panic")
		}
	}()
	results.MetricOf("no_such_metric")
}

// TestCheckBounds: a figure outside [0, Max] is refused, naming the
// metric; NaN too.
func TestCheckBounds(t *testing.T) {
	m := results.MetricOf(results.PeakRSSBytes)
	if err := m.Check(1 << 30); err != nil {
		t.Errorf("1 GiB refused: %v", err)
	}
	for _, v := range []float64{-1, math.NaN(), m.Max() * 2} {
		if err := m.Check(v); err == nil || !strings.Contains(err.Error(), results.PeakRSSBytes) {
			t.Errorf("%g: %v", v, err)
		}
	}
}
