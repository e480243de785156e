package predict

import (
	"math"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/spec"
)

func TestInSampleSummarisesTheChecks(t *testing.T) {
	ms, err := Load(t.Context(), []string{cpuCalibrate}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ms.Fit(ms.Points)
	if err != nil {
		t.Fatal(err)
	}
	in, err := m.InSample(0)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := m.Checks(0)
	if err != nil {
		t.Fatal(err)
	}
	if in != Summarise(checks) || in.Configurations != len(m.Points) {
		t.Fatalf("%d configurations, want %d", in.Configurations, len(m.Points))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range checks {
		e := c.Point.SecondsPerProof/c.SecondsPerProof - 1
		lo, hi = min(lo, e), max(hi, e)
	}
	r := in.PartitionsPerSecond
	if r.Min != lo || r.Max != hi || r.P90 < 0 || r.P90 > max(-lo, hi) {
		t.Errorf("partitions/s error %+v, want range %g..%g and a p90 inside it", r, lo, hi)
	}
	if s := in.String(); !strings.Contains(s, "partitions/s "+r.Range()) {
		t.Errorf("%q does not give the partitions/s range %s", s, r.Range())
	}
}

func TestWarningsNameTheHost(t *testing.T) {
	m := &Model{Points: []Point{
		{Scenario: "a", Load: &PointLoad{Load1: 1, Others: 0.02}},
		{Scenario: "b", Load: &PointLoad{Load1: 1, Others: 0.04}},
	}}
	if w := m.Warnings(); len(w) != 0 {
		t.Errorf("quiet, even, interleaved: warnings %q", w)
	}
	m.Sequential = []string{"cal/results.json"}
	m.Points[1].Load = &PointLoad{Load1: 6, Others: 0.55}
	got := strings.Join(m.Warnings(), "\n")
	for _, want := range []string{
		"calibration cal/results.json ran its configurations one after another, not interleaved",
		"high host load in 1 of 2 configurations (b (others 55% of the CPU, load 6.0))",
		"other processes used 2% of the CPU during a and 55% during b",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings\n%s\nwant %q", got, want)
		}
	}
	// Stolen time is high load too, even where the others' share was not measured.
	m = &Model{Points: []Point{{Scenario: "c", Load: &PointLoad{Load1: 1, Steal: 0.2, Others: -1}}}}
	if got := strings.Join(m.Warnings(), "\n"); !strings.Contains(got, "c (steal 20%, load 1.0)") {
		t.Errorf("stolen time: %q", got)
	}
}

// A host prover's runs beside neighbours that took half the CPU, every
// time twice as long: the laws are those of the quiet runs, and each run
// is predicted at the share it had.
func TestHostShareTakesTheNeighboursOut(t *testing.T) {
	dir := t.TempDir()
	withLoad := func(name string, others, slow float64) *Model {
		t.Helper()
		doc := rewrite(t, cpuCalibrate, dir, name, func(d *results.Run) {
			for i := range d.Scenarios {
				for j := range d.Scenarios[i].Repetitions {
					r := &d.Scenarios[i].Repetitions[j]
					r.HostLoad = &results.HostLoad{Load1: 1, OthersCPUFraction: &others}
					r.SecondsPerProof *= slow
					for k, st := range r.Stages {
						st.TotalSeconds, st.MeanSeconds = st.TotalSeconds*slow, st.MeanSeconds*slow
						r.Stages[k] = st
					}
				}
			}
		})
		ms, err := Load(t.Context(), []string{doc}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := ms.Fit(ms.Points)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	quiet, busy := withLoad("quiet.json", 0, 1), withLoad("busy.json", 0.5, 2)
	for _, p := range busy.Points {
		if math.Abs(p.HostShare-0.5) > 1e-9 {
			t.Errorf("%s: host share %g, want 0.5", p.Scenario, p.HostShare)
		}
	}
	for _, n := range []float64{1 << 12, 1 << 14} {
		if q, b := quiet.Finalize.At(n), busy.Finalize.At(n); math.Abs(b/q-1) > 1e-6 {
			t.Errorf("finalize at %g: %g beside neighbours, %g quiet", n, b, q)
		}
	}
	qi, err := quiet.InSample(0)
	if err != nil {
		t.Fatal(err)
	}
	bi, err := busy.InSample(0)
	if err != nil {
		t.Fatal(err)
	}
	// Not to the bit: the series (first-use stall) and the pacer's clock
	// were not slowed with the stages.
	if bi.PartitionsPerSecond.P90 > qi.PartitionsPerSecond.P90+0.02 {
		t.Errorf("in-sample partitions/s p90 %.3f beside neighbours, %.3f quiet", bi.PartitionsPerSecond.P90, qi.PartitionsPerSecond.P90)
	}
}

func TestBeyondNamesConfigurationsPastTheCalibratedSizes(t *testing.T) {
	at := func(name string, constraints int) spec.Spec {
		s := spec.Spec{Name: name}
		s.Workload.Constraints = constraints
		return s
	}
	m := &Model{Points: []Point{{Spec: at("cal21", 1<<21)}, {Spec: at("cal24", 1<<24)}}}
	if w := m.Beyond([]spec.Spec{at("mid", 1<<23), at("next", 1<<25)}); len(w) != 0 {
		t.Errorf("within one doubling of 2^24: warnings %q", w)
	}
	w := m.Beyond([]spec.Spec{at("a", 1<<26), at("b", 1<<26), at("c", 1<<27), at("d", 1<<22)})
	want := []string{
		"a, b at 2^26 constraints: 2 doublings past the calibration's largest size (2^24)",
		"c at 2^27 constraints: 3 doublings past the calibration's largest size (2^24)",
	}
	if len(w) != len(want) {
		t.Fatalf("warnings %q, want %d", w, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(w[i], want[i]) || !strings.Contains(w[i], "calibrate at or near the size predicted") {
			t.Errorf("warning %d: %q, want it to start %q and say what to do", i, w[i], want[i])
		}
	}
	if w := (&Model{}).Beyond([]spec.Spec{at("a", 1<<26)}); len(w) != 0 {
		t.Errorf("no calibration points: warnings %q", w)
	}
}
