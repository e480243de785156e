package results_test

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"

	"github.com/provebench/provebench/results"
)

func TestWriteBenchfmtParsesBack(t *testing.T) {
	run := writerFixture()
	var buf bytes.Buffer
	if err := results.WriteBenchfmt(&buf, run); err != nil {
		t.Fatal(err)
	}
	t.Logf("output:\n%s", buf.String())

	rd := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "results.bench")
	var got []*benchfmt.Result
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("syntax error: %v", rec)
		case *benchfmt.Result:
			got = append(got, rec.Clone())
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	// Measured repetitions only: 2 of hold (warm-up and failure left out), 1 of budget.
	if len(got) != 3 {
		t.Fatalf("%d result lines, want 3", len(got))
	}
	if rd.Units().GetBetter(results.UnitPartitionsPerSecond) != 1 {
		t.Error("partitions/sec is not marked better=higher")
	}
	if rd.Units().GetBetter(results.UnitSteadyDeviceBusy) != 1 {
		t.Error("device-busy-steady-% is not marked better=higher")
	}
	if rd.Units().GetBetter(results.UnitSecondsPerProof) != 0 {
		t.Error("sec/proof has unexpected unit metadata")
	}
	// Counted figures are exact: benchstat must not test them as noise.
	for _, unit := range []string{"minor-faults", "major-faults", results.CounterUnit("abc_bytes"), results.CounterUnit("in_channel")} {
		if rd.Units().GetAssumption(unit) != benchmath.AssumeExact {
			t.Errorf("%s is not marked assume=exact", unit)
		}
	}
	for _, unit := range []string{results.UnitSecondsPerProof, results.UnitPeakRSS} {
		if rd.Units().GetAssumption(unit) != benchmath.AssumeNothing {
			t.Errorf("%s is marked exact; it is read on a clock", unit)
		}
	}

	hold := got[0]
	if hold.Name.String() != "Provebench/hold_pw:2-2" {
		t.Errorf("name %q", hold.Name)
	}
	base, parts := hold.Name.Parts()
	if string(base) != "Provebench" || len(parts) != 2 || string(parts[0]) != "/hold_pw:2" || string(parts[1]) != "-2" {
		t.Errorf("name parts %q %q: want one sub-benchmark part and GOMAXPROCS", base, parts)
	}
	if got[2].Name.String() != "Provebench/budget_16GiB-2" {
		t.Errorf("name %q", got[2].Name)
	}
	if hold.Iters != 2 {
		t.Errorf("iters %d, want the proofs completed (2)", hold.Iters)
	}
	for key, want := range map[string]string{"goos": "linux", "goarch": "amd64", "cpu": "Test CPU @ 3.0GHz", "backend": "cpu"} {
		if v := hold.GetConfig(key); v != want {
			t.Errorf("config %s = %q, want %q", key, v, want)
		}
	}
	if hold.GetConfig("gpu") != "" {
		t.Error("gpu config written without GPUs")
	}
	for unit, want := range map[string]float64{
		results.UnitSecondsPerProof:     5,
		results.UnitPartitionsPerSecond: 2,
		results.UnitPeakRSS:             3 << 30,
		results.UnitDeviceBusy:          75,
		results.UnitSteadyDeviceBusy:    90,
		"peak-abc-B":                    1 << 20,
		"peak-in_channel":               2,
	} {
		if v, ok := hold.Value(unit); !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", unit, v, ok, want)
		}
	}
	if _, ok := hold.Value(results.UnitPeakGPU); ok {
		t.Error("peak GPU memory written without NVML: absent must not read as 0")
	}
	if v, ok := got[2].Value(results.UnitPeakGPU); !ok || v != 5<<30 {
		t.Errorf("peak GPU = %v (present %v)", v, ok)
	}
}

// TestBenchfmtProjects runs the output through benchstat's own grouping
// (benchproc) and statistics (benchmath): the scenario's repetitions must
// land in one cell per unit, as benchstat would tabulate them.
func TestBenchfmtProjects(t *testing.T) {
	var buf bytes.Buffer
	if err := results.WriteBenchfmt(&buf, writerFixture()); err != nil {
		t.Fatal(err)
	}
	// benchstat's defaults: tables by .config (with the unit), rows by .fullname.
	var parser benchproc.ProjectionParser
	table, unitField, err := parser.ParseWithUnit(".config", nil)
	if err != nil {
		t.Fatal(err)
	}
	row, err := parser.Parse(".fullname", nil)
	if err != nil {
		t.Fatal(err)
	}
	fullname := row.Fields()[0]

	type cell struct{ table, row, unit string }
	values := map[cell][]float64{}
	rd := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "results.bench")
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		rk := row.Project(res)
		for _, tk := range table.ProjectValues(res) {
			u := tk.Get(unitField)
			v, _ := res.Value(u)
			c := cell{tk.StringValues(), rk.Get(fullname), u}
			values[c] = append(values[c], v)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	tables := map[string]bool{}
	for c := range values {
		if c.unit == results.UnitSecondsPerProof {
			tables[c.table] = true
		}
	}
	if len(tables) != 1 {
		t.Errorf("results split over %d benchstat tables (%v): file configuration must not vary within a run", len(tables), tables)
	}
	var pps []float64
	for c, v := range values {
		if c.row == "Provebench/hold_pw:2-2" && c.unit == results.UnitPartitionsPerSecond {
			pps = v
		}
	}
	if len(pps) != 2 {
		t.Fatalf("hold scenario partitions/sec cell has %v, want its 2 measured repetitions; cells %v", pps, values)
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(pps, &benchmath.DefaultThresholds), 0.95)
	if s.Center != 2.05 {
		t.Errorf("median %v, want 2.05", s.Center)
	}
}

func TestBenchmarkName(t *testing.T) {
	for _, tc := range []struct {
		in         string
		gomaxprocs int
		want       string
	}{
		{"hold pw=4", 8, "hold_pw:4-8"},
		{"release-pw-12", 0, "release-pw_12"},
		{"release-pw-12", 16, "release-pw-12-16"},
		{"a/b\tc", 0, "a_b_c"},
		{"", 0, "_"},
		{"trailing-", 0, "trailing-"},
	} {
		if got := results.BenchmarkName(tc.in, tc.gomaxprocs); got != tc.want {
			t.Errorf("BenchmarkName(%q, %d) = %q, want %q", tc.in, tc.gomaxprocs, got, tc.want)
		}
		// Whatever the name, it reads back as one part (plus GOMAXPROCS).
		_, parts := benchfmt.Name(results.BenchmarkBase + "/" + results.BenchmarkName(tc.in, tc.gomaxprocs)).Parts()
		if n := len(parts); n != 1+min(tc.gomaxprocs, 1) {
			t.Errorf("%q splits into %q", tc.in, parts)
		}
	}
}

func TestCounterUnit(t *testing.T) {
	for in, want := range map[string]string{"abc_bytes": "peak-abc-B", "budget_reserved_bytes": "peak-budget_reserved-B", "on_gpu": "peak-on_gpu"} {
		if got := results.CounterUnit(in); got != want {
			t.Errorf("CounterUnit(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteBenchfmtFile(t *testing.T) {
	dir := t.TempDir()
	if err := results.WriteBenchfmtFile(filepath.Join(dir, "results.bench"), writerFixture()); err != nil {
		t.Fatal(err)
	}
	err := results.WriteBenchfmtFile(filepath.Join(dir, "missing", "results.bench"), writerFixture())
	if err == nil || errors.Is(err, io.EOF) {
		t.Errorf("writing into a missing directory: %v", err)
	}
}
