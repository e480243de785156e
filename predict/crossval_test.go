package predict

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/spec"
)

// Committed real runs on the CPU backend: every strategy at 2^12 and 2^14
// (3 repetitions) and at 2^15 (5), from one commit; and every strategy at
// 2^10 and 2^12 from another.
const (
	cpuCalibrate = "../docs/results/cpu-simulate/calibrate/results.json.gz"
	cpuPredict   = "../docs/results/cpu-simulate/predict/results.json.gz"
	cpuSimulated = "../docs/results/cpu-simulate/simulated/results.json"
	cacheFixture = "calibcache/testdata/calibration-cpu.json"
)

// rewrite reads a results document, lets edit change it and writes it
// under dir.
func rewrite(t *testing.T, from, dir, name string, edit func(*results.Run)) string {
	t.Helper()
	doc, err := results.Read(from)
	if err != nil {
		t.Fatal(err)
	}
	edit(doc)
	p := filepath.Join(dir, name)
	if err := results.Write(p, doc); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCrossValidateLeavesEachFamilyOut(t *testing.T) {
	ms, err := Load(t.Context(), []string{cpuCalibrate, cpuPredict}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	by, err := ParseFamilyBy("label:pipeline.strategy")
	if err != nil {
		t.Fatal(err)
	}
	cv, err := CrossValidate(context.Background(), ms, by, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cv.Families) != 4 || len(cv.Predictions) != 12 {
		t.Fatalf("%d families, %d predictions; want 4 and 12", len(cv.Families), len(cv.Predictions))
	}
	for _, p := range cv.Predictions {
		if p.Family != "pipeline.strategy="+string(p.Point.Spec.Pipeline.Strategy) || p.CalibratedOn != 9 {
			t.Errorf("%s: family %q calibrated on %d, want its strategy's and 9", p.Point.Scenario, p.Family, p.CalibratedOn)
		}
		if p.Err != "" || math.IsNaN(p.SecondsPerProofErr()) || math.IsNaN(p.PeakRSSErr()) {
			t.Errorf("%s: not predicted: %s", p.Point.Scenario, p.Err)
		}
	}
	// Every fold's prediction is the model of the rest's, not of all the
	// runs: refitted to the configurations outside its family, each
	// prediction comes out the same, and fitted to all of them (its own
	// family in) each comes out otherwise.
	all, err := ms.Fit(ms.Points)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cv.Predictions {
		var rest []Point
		for _, q := range ms.Points {
			if q.Spec.Pipeline.Strategy != p.Point.Spec.Pipeline.Strategy {
				rest = append(rest, q)
			}
		}
		m, err := ms.Fit(rest)
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.predict(p.Point, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rest) != p.CalibratedOn || out.SecondsPerProof != p.SecondsPerProof || out.PeakRSS != p.PeakRSS {
			t.Errorf("%s: held out %.6g s/proof, %.6g B; the rest's %d configurations predict %.6g, %.6g",
				p.Point.Scenario, p.SecondsPerProof, p.PeakRSS, len(rest), out.SecondsPerProof, out.PeakRSS)
		}
		in, err := all.predict(p.Point, 0)
		if err != nil {
			t.Fatal(err)
		}
		if in.SecondsPerProof == p.SecondsPerProof && in.PeakRSS == p.PeakRSS {
			t.Errorf("%s: the held-out prediction equals the in-sample one: the family was not left out", p.Point.Scenario)
		}
	}
	sums := cv.Summaries()
	if len(sums) != 2*5 || sums[0].Group != "all" || sums[0].N != 12 {
		t.Fatalf("summaries %+v", sums)
	}
	if misses := cv.Misses(Targets{P90: 0.0001}); len(misses) != 2 {
		t.Errorf("a 0.01%% target missed %v, want both metrics", misses)
	}
	if misses := cv.Misses(Targets{P90: 10, Max: 10}); len(misses) != 0 {
		t.Errorf("a 1000%% target missed %v", misses)
	}
	// Nothing predicted is nothing shown to be within a target.
	if misses := (&CrossValidation{}).Misses(Targets{P90: 10, Max: 10}); len(misses) != len(Metrics) {
		t.Errorf("no prediction at all missed %v, want every metric", misses)
	}
	if _, err := CrossValidate(context.Background(), ms, FamilyBy{Rule: "label", Label: "workload.partitions"}, 0, nil); err == nil || !strings.Contains(err.Error(), "two families") {
		t.Errorf("one family: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := CrossValidate(ctx, ms, by, 0, nil); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

func TestDistributionNearestRank(t *testing.T) {
	var errs []float64
	for i := 1; i <= 10; i++ {
		errs = append(errs, -float64(i)/100)
	}
	errs = append(errs, math.NaN())
	d := ErrorDistribution(errs)
	if d.N != 10 || d.Missing != 1 || d.Median != 0.055 || d.P90 != 0.09 || d.Max != 0.1 || d.Min != -0.1 || d.MedianSigned != -0.055 {
		t.Errorf("%+v", d)
	}
	if d := ErrorDistribution([]float64{0.2}); d.P90 != 0.2 || d.Max != 0.2 {
		t.Errorf("one: %+v", d)
	}
}

func TestFamilyBy(t *testing.T) {
	ms, err := Load(t.Context(), []string{cpuCalibrate}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := ms.Points[0] // cal/constraints=2^12/strategy=release of calibrate.yaml
	for rule, want := range map[string]string{
		"matrix":                     "calibrate:cal",
		"config":                     "calibrate:cal/constraints=2^12/strategy=release",
		"label:workload.constraints": "workload.constraints=2^12",
		"label:workload.proofs":      "workload.proofs=2",
		"label:pipeline.early_free":  "pipeline.early_free=false",
	} {
		by, err := ParseFamilyBy(rule)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := by.Of(&p); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", rule, got, err, want)
		}
	}
	// A scenario that sets the size is in the family of a matrix that
	// sweeps it.
	q := p
	q.Spec.Labels = nil
	if got, _ := (FamilyBy{Rule: "label", Label: "workload.constraints"}).Of(&q); got != "workload.constraints=2^12" {
		t.Errorf("the size of a scenario outside a matrix: %q", got)
	}
	p.Spec.Vars = map[string]string{"family": "warm-pw4"}
	if got, _ := (FamilyBy{Rule: "matrix"}).Of(&p); got != "warm-pw4" {
		t.Errorf("vars.family: %q", got)
	}
	if _, err := (FamilyBy{Rule: "label", Label: "workload.nothing"}).Of(&p); err == nil {
		t.Error("a label no configuration has was accepted")
	}
	for _, bad := range []string{"label:", "strategy", "labels:x"} {
		if _, err := ParseFamilyBy(bad); err == nil {
			t.Errorf("--family-by %q accepted", bad)
		}
	}
}

func TestLoadRefusesMixedProvers(t *testing.T) {
	dir := t.TempDir()
	// Another commit: refused, naming each document's, unless allowed.
	other := rewrite(t, cpuPredict, dir, "other.json", func(d *results.Run) { d.ToolVersion = "(devel) 0123456789abcdef0123456789abcdef01234567" })
	_, err := Load(t.Context(), []string{cpuCalibrate, other}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "345693508163af4d8b377defe067566d10a61c82") || !strings.Contains(err.Error(), "other.json: 0123456789abcdef") {
		t.Errorf("mixed commits: %v", err)
	}
	ms, err := Load(t.Context(), []string{cpuCalibrate, other}, LoadOptions{AllowMixedCommits: true})
	if err != nil || len(ms.Points) != 12 || !strings.Contains(strings.Join(ms.Notes, "\n"), "--allow-mixed-commits") {
		t.Errorf("allowed mixed commits: %v, notes %q", err, ms.Notes)
	}
	if _, err := Load(t.Context(), []string{cpuCalibrate, cacheFixture}, LoadOptions{}); err == nil {
		t.Error("the committed documents of two commits were taken together")
	}
	// A simulated document is no calibration.
	if _, err := Load(t.Context(), []string{cpuSimulated}, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "simulated") {
		t.Errorf("simulated: %v", err)
	}
	// Exec configurations are left out with a note, the rest kept.
	mixed := rewrite(t, cpuCalibrate, dir, "mixed.json", func(d *results.Run) {
		x := d.Scenarios[0]
		x.Name, x.Driver, x.Backend, x.Strategy = "external", "exec", "exec", "exec"
		d.Scenarios = append(d.Scenarios, x)
	})
	ms, err = Load(t.Context(), []string{mixed}, LoadOptions{})
	if err != nil || len(ms.Points) != 8 || !strings.Contains(strings.Join(ms.Notes, "\n"), "left out 1 configuration run by the exec driver (external)") {
		t.Errorf("exec mixed in: %v, %d points, notes %q", err, len(ms.Points), ms.Notes)
	}
	// Warm and cold clocks do not calibrate together.
	cold := rewrite(t, cpuCalibrate, dir, "cold.json", func(d *results.Run) {
		for i := range d.Scenarios[0].Repetitions {
			d.Scenarios[0].Repetitions[i].Measure = results.MeasureCold
		}
	})
	if _, err := Load(t.Context(), []string{cold}, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "different clocks") {
		t.Errorf("warm and cold: %v", err)
	}
}

// setMode sets workload.synthesis in a scenario's recorded spec.
func setMode(t *testing.T, sc *results.Scenario, mode string) {
	t.Helper()
	var spec map[string]any
	if err := json.Unmarshal(sc.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	spec["workload"].(map[string]any)["synthesis"] = mode
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	sc.Spec = raw
}

func TestSynthesisModesCalibrateApart(t *testing.T) {
	// The pacer runs stand for a cached-witness mode: a third of the
	// synthesis time recorded.
	doc := rewrite(t, cpuCalibrate, t.TempDir(), "modes.json", func(d *results.Run) {
		for i := range d.Scenarios {
			sc := &d.Scenarios[i]
			if sc.Strategy != "pacer" {
				continue
			}
			setMode(t, sc, "cached")
			for j := range sc.Repetitions {
				st := sc.Repetitions[j].Stages["synthesis"]
				st.MeanSeconds /= 3
				sc.Repetitions[j].Stages["synthesis"] = st
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
	compute, cached := m.Synthesis[SynthesisCompute], m.Synthesis["cached"]
	if len(m.Synthesis) != 2 || cached.Alone.A == 0 {
		t.Fatalf("synthesis laws %+v", m.Synthesis)
	}
	// One law for both would give 1. The runs have 4 synthesis rounds,
	// which a cached partition does not do.
	w := config.Workload{Constraints: 1 << 14, SynthesisRounds: 4}
	wc := w
	wc.Synthesis = config.SynthesisCached
	if r := compute.At(w) / cached.At(wc); !(r >= 2 && r <= 5) { // NaN fails too
		t.Errorf("compute over cached synthesis %.2f, want about 3: the modes were mixed", r)
	}
	// Without any cached run, a cached configuration is not predicted.
	var computeOnly, cachedOnes []Point
	for _, p := range ms.Points {
		if p.SynthesisMode == "cached" {
			cachedOnes = append(cachedOnes, p)
		} else {
			computeOnly = append(computeOnly, p)
		}
	}
	m, err = ms.Fit(computeOnly)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.predict(cachedOnes[0], 0); err == nil || !strings.Contains(err.Error(), "workload.synthesis cached") {
		t.Errorf("cached predicted from compute runs: %v", err)
	}
}

func TestDeviceClockIsTakenAsIs(t *testing.T) {
	// Every repetition records its device time: 10 ms of NTT and 30 ms
	// of MSMs per partition at 2^12, 40 and 120 at 2^14; and an upload,
	// so that the prover is a device of its own, not the host's cores.
	doc := rewrite(t, cpuCalibrate, t.TempDir(), "clock.json", func(d *results.Run) {
		for i := range d.Scenarios {
			k := float64(d.Scenarios[i].Constraints) / (1 << 12)
			for j := range d.Scenarios[i].Repetitions {
				r := &d.Scenarios[i].Repetitions[j]
				total := 0.04 * k
				r.DeviceSecondsPerPartition = &total
				r.DeviceStageSeconds = map[string]float64{"ntt_region": 0.01 * k, "msm_a": 0.03 * k, "upload": 5}
				n := r.Stages[pipeline.StageGPUStart].Count
				r.Stages[prover.StageUpload] = results.StageSummary{Count: n, TotalSeconds: 0.001 * float64(n), MeanSeconds: 0.001}
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
	for _, c := range []struct {
		law  CostLaw
		n    float64
		want float64
	}{{m.GPUStart, 1 << 12, 0.01}, {m.GPUStart, 1 << 14, 0.04}, {m.Finalize, 1 << 12, 0.03}, {m.Finalize, 1 << 14, 0.12}} {
		if got := c.law.At(c.n); !(math.Abs(got/c.want-1) <= 1e-6) {
			t.Errorf("law %v at %g: %g, want %g", c.law, c.n, got, c.want)
		}
	}
}

func TestOneSizeIsSaid(t *testing.T) {
	ms, err := Load(t.Context(), []string{cpuPredict}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ms.Fit(ms.Points)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := m.OneSize(); !ok || n != 1<<15 {
		t.Errorf("one size: %d %v", n, ok)
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "calibrated at one size (2^15 constraints): every cost law's exponent is assumed 1") {
		t.Errorf("notes %q", m.Notes)
	}
	ms, _ = Load(t.Context(), []string{cpuCalibrate}, LoadOptions{})
	if m, _ := ms.Fit(ms.Points); len(m.Notes) != 0 {
		t.Errorf("two sizes: notes %q", m.Notes)
	}
}

// A cached witness is copied, not synthesized: its rounds ran once before
// the run, so the cached law must not grow with them (a rounds-1 cached
// configuration would otherwise be predicted twice as slow).
func TestSynthesisLawCachedIgnoresRounds(t *testing.T) {
	law := SynthesisLaw{Alone: PowerLaw{A: 1e-7, B: 1}}
	w := config.Workload{Constraints: 1 << 20, SynthesisRounds: 3}
	if got, want := law.At(w), 4e-7*(1<<20); !(math.Abs(got-want) <= 1e-9) {
		t.Errorf("computed synthesis %v s, want %v (constraints × (rounds+1))", got, want)
	}
	w.Synthesis = config.SynthesisCached
	if got, want := law.At(w), 1e-7*(1<<20); !(math.Abs(got-want) <= 1e-9) {
		t.Errorf("cached synthesis %v s, want %v (the copy alone)", got, want)
	}
}

// TestH200CrossValidation recomputes every cross-validation committed in
// docs/results/h200-validation, each from the committed documents as its
// README's commands ran it, and holds it to its committed figures: each
// configuration's errors (crossval.csv), each distribution
// (crossval-summary.csv) and the README table's median, p90 and max |error|,
// to 0.05 percentage points (half the README's rounding). A change of the
// model fails here whichever way it moves a view, and shows as a diff of
// the committed files once they are written again.
//
// The headline (crossval/) is a development-set figure, not a held-out
// one: each configuration is predicted by a fold that left its family out,
// but the model's mechanisms were chosen while looking at these very errors
// (the README's "Mechanisms measured and added"), so the figure is
// in-sample for the model's design. Since computed synthesis's laws are
// proportional (issue 33 item 4, docs/results/h200-bias) it misses the
// issue's p90 target (13.0% against 10%; max 14.7%, within 15%), as every
// other view does, and each is held to its figures and to missing them:
// synth21 measured in a minute of its own, synth21's two runs pooled,
// every family left out with the calibration set, each strategy left out,
// each size left out.
func TestH200CrossValidation(t *testing.T) {
	const dir = "../docs/results/h200-validation/"
	cal, synthApart := dir+"calibration/results.json.gz", dir+"validation-synth21/results.json.gz"
	interleaved, big, pileup := dir+"interleaved21/results.json.gz", dir+"validation-big24-mid23/results.json.gz", dir+"validation-pileup22-ramp22/results.json.gz"
	targets := Targets{P90: 0.10, Max: 0.15}
	for _, v := range []struct {
		out           string // the committed folder
		what          string
		files, pinned []string
		familyBy      string
		n             int
		spp, rss      [3]float64 // the README's median, p90 and max |error|, %
		missesTargets bool
	}{
		{"crossval", "the headline (a development-set figure, in-sample for the model's design)",
			[]string{interleaved, big, pileup}, []string{cal}, "matrix", 14, [3]float64{6.1, 13.0, 14.7}, [3]float64{0.3, 2.0, 4.2}, true},
		{"crossval-separate", "synth21 from its own run",
			[]string{synthApart, big, pileup}, []string{cal}, "matrix", 14, [3]float64{8.0, 29.4, 31.0}, [3]float64{0.5, 2.0, 4.2}, true},
		{"crossval-pooled", "synth21's two runs pooled",
			[]string{interleaved, big, pileup, synthApart}, []string{cal}, "matrix", 14, [3]float64{7.5, 18.4, 23.9}, [3]float64{0.3, 2.0, 4.2}, true},
		{"crossval-all", "every family left out, the calibration set too",
			[]string{cal, interleaved, big, pileup}, nil, "matrix", 31, [3]float64{7.4, 13.0, 20.8}, [3]float64{0.5, 1.1, 4.2}, true},
		{"crossval-strategy", "each strategy left out",
			[]string{interleaved, big, pileup}, []string{cal}, "label:pipeline.strategy", 14, [3]float64{4.9, 11.7, 14.1}, [3]float64{0.1, 2.1, 4.1}, true},
		{"crossval-size", "each size left out",
			[]string{cal, interleaved, big, pileup}, nil, "label:workload.constraints", 31, [3]float64{9.1, 21.7, 31.1}, [3]float64{1.5, 1.7, 2.2}, true},
	} {
		t.Run(v.out, func(t *testing.T) {
			ms, err := Load(t.Context(), append(slices.Clone(v.pinned), v.files...), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			by, err := ParseFamilyBy(v.familyBy)
			if err != nil {
				t.Fatal(err)
			}
			cv, err := CrossValidate(context.Background(), ms, by, int64(ms.Environment.MemoryBytes), v.pinned)
			if err != nil {
				t.Fatal(err)
			}
			if len(cv.Predictions) != v.n {
				t.Fatalf("%s: %d configurations, want %d", v.what, len(cv.Predictions), v.n)
			}
			checkCommittedPredictions(t, v.what, cv, readCSV(t, dir+v.out+"/crossval.csv"))
			checkCommittedSummaries(t, v.what, cv, readCSV(t, dir+v.out+"/crossval-summary.csv"))
			for _, s := range cv.Summaries() {
				if s.Group != "all" {
					continue
				}
				want := v.spp
				if s.Metric == MetricPeakRSS {
					want = v.rss
				}
				got := [3]float64{s.Median, s.P90, s.Max}
				for k, name := range []string{"median", "p90", "max"} {
					if !(math.Abs(100*got[k]-want[k]) <= 0.05) {
						t.Errorf("%s: %s |error| %s %.2f%%, the README says %.1f%%", v.what, s.Metric, name, 100*got[k], want[k])
					}
				}
			}
			if misses := cv.Misses(targets); (len(misses) > 0) != v.missesTargets {
				t.Errorf("%s: targets p90 10%%, max 15%% missed %q; the README says missed: %v", v.what, misses, v.missesTargets)
			}
			if v.out == "crossval-size" {
				// Each size left out, each stage's error apart: how the
				// laws carry to a size they were not fitted on.
				table := cv.StageTable()
				for _, want := range []string{"| family | synthesis compute | synthesis cached | upload | NTT region | MSMs | peak GPU memory | setup |",
					"| workload.constraints=2^21 |", "| workload.constraints=2^24 |"} {
					if !strings.Contains(table, want) {
						t.Errorf("%s: the stage table lacks %q:\n%s", v.what, want, table)
					}
				}
			}
			if v.out != "crossval" {
				return
			}
			for _, p := range cv.Predictions {
				if strings.HasPrefix(p.Point.Scenario, "pileup22-release") && !(math.Abs(p.PeakRSSErr()) <= 0.05) {
					t.Errorf("%s: release's pile-up: peak RSS off by %+.1f%%, want within 5%%", v.what, 100*p.PeakRSSErr())
				}
			}
		})
	}
}

// goldenTolerance is how far a recomputed error may be from its committed
// value: 0.05 percentage points, far below any change of the model worth
// the name and far above the committed files' six significant digits.
const goldenTolerance = 0.0005

// checkCommittedPredictions holds each configuration's errors to its row
// of a committed crossval.csv.
func checkCommittedPredictions(t *testing.T, what string, cv *CrossValidation, rows []map[string]string) {
	t.Helper()
	if len(rows) != len(cv.Predictions) {
		t.Fatalf("%s: %d configurations predicted, %d committed", what, len(cv.Predictions), len(rows))
	}
	byName := map[string]map[string]string{}
	for _, r := range rows {
		byName[r["configuration"]] = r
	}
	for i := range cv.Predictions {
		p := &cv.Predictions[i]
		r := byName[p.Point.Scenario]
		if r == nil {
			t.Errorf("%s: %s predicted, not committed", what, p.Point.Scenario)
			continue
		}
		if r["family"] != p.Family || r["calibrated_on"] != strconv.Itoa(p.CalibratedOn) || r["repetitions"] != strconv.Itoa(p.Point.Reps) || r["not_predicted"] != p.Err {
			t.Errorf("%s: %s: family %q, calibrated on %d, %d repetitions, not predicted %q; committed %q, %s, %s, %q",
				what, p.Point.Scenario, p.Family, p.CalibratedOn, p.Point.Reps, p.Err, r["family"], r["calibrated_on"], r["repetitions"], r["not_predicted"])
		}
		for _, c := range []struct {
			column string
			got    float64
		}{{"seconds_per_proof_error", p.SecondsPerProofErr()}, {"peak_rss_error", p.PeakRSSErr()}} {
			if want := parseFloat(t, r[c.column]); !(math.Abs(c.got-want) <= goldenTolerance) {
				t.Errorf("%s: %s: %s %+.2f%%, committed %+.2f%%", what, p.Point.Scenario, c.column, 100*c.got, 100*want)
			}
		}
	}
}

// checkCommittedSummaries holds every distribution, overall and per
// strategy, to a committed crossval-summary.csv.
func checkCommittedSummaries(t *testing.T, what string, cv *CrossValidation, rows []map[string]string) {
	t.Helper()
	sums := cv.Summaries()
	if len(rows) != len(sums) {
		t.Fatalf("%s: %d distributions, %d committed", what, len(sums), len(rows))
	}
	for i, s := range sums {
		r := rows[i]
		if r["metric"] != s.Metric || r["group"] != s.Group || r["predicted"] != strconv.Itoa(s.N) || r["not_predicted"] != strconv.Itoa(s.Missing) {
			t.Errorf("%s: distribution %d is %s/%s of %d (%d not predicted); committed %s/%s of %s (%s)",
				what, i, s.Metric, s.Group, s.N, s.Missing, r["metric"], r["group"], r["predicted"], r["not_predicted"])
			continue
		}
		for _, c := range []struct {
			column string
			got    float64
		}{{"median_abs_error", s.Median}, {"p90_abs_error", s.P90}, {"max_abs_error", s.Max}, {"median_error", s.MedianSigned}} {
			if want := parseFloat(t, r[c.column]); !(math.Abs(c.got-want) <= goldenTolerance) {
				t.Errorf("%s: %s/%s %s %.2f%%, committed %.2f%%", what, s.Metric, s.Group, c.column, 100*c.got, 100*want)
			}
		}
	}
}

// readCSV reads a committed CSV file into one map per row, by header.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(records) < 2 {
		t.Fatalf("%s: %d lines, want a header and rows", path, len(records))
	}
	var rows []map[string]string
	for _, rec := range records[1:] {
		row := map[string]string{}
		for k, name := range records[0] {
			row[name] = rec[k]
		}
		rows = append(rows, row)
	}
	return rows
}

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("committed figure %q: %v", s, err)
	}
	return v
}

// A configuration run again in a later document is one configuration: its
// repetitions pooled, both documents named, a note said; a configuration
// of another spec under the same name is not pooled.
func TestLoadPoolsAConfigurationAcrossDocuments(t *testing.T) {
	dir := t.TempDir()
	again := rewrite(t, cpuCalibrate, dir, "again.json", func(d *results.Run) {
		d.StartedAt = d.StartedAt.Add(time.Hour) // a later run
		d.Scenarios = d.Scenarios[:2]
		var spec map[string]any
		if err := json.Unmarshal(d.Scenarios[1].Spec, &spec); err != nil {
			t.Fatal(err)
		}
		spec["repeats"], spec["source"] = 7.0, "elsewhere.yaml:1" // how often and from where: the same configuration
		spec["workload"].(map[string]any)["seed"] = 99.0          // another workload: not
		raw, _ := json.Marshal(spec)
		d.Scenarios[1].Spec = raw
	})
	one, err := Load(t.Context(), []string{cpuCalibrate}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Load(t.Context(), []string{cpuCalibrate, again}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms.Points) != len(one.Points)+1 {
		t.Fatalf("%d points, want %d: one pooled, one apart", len(ms.Points), len(one.Points)+1)
	}
	first := ms.Points[0]
	if first.Reps != 2*one.Points[0].Reps || len(first.Files) != 2 || first.Files[1] != again {
		t.Errorf("pooled point: %d repetitions from %q, want %d from both", first.Reps, first.Files, 2*one.Points[0].Reps)
	}
	if !strings.Contains(strings.Join(ms.Notes, "\n"), first.Scenario+" was measured in 2 documents") {
		t.Errorf("notes %q", ms.Notes)
	}
	// Another commit's binary measured another prover: never pooled.
	other := rewrite(t, again, dir, "other.json", func(d *results.Run) { d.ToolVersion = "(devel) 0123456789abcdef0123456789abcdef01234567" })
	mixed, err := Load(t.Context(), []string{cpuCalibrate, other}, LoadOptions{AllowMixedCommits: true})
	if err != nil || len(mixed.Points) != len(one.Points)+2 {
		t.Errorf("two commits: %v, %d points, want %d", err, len(mixed.Points), len(one.Points)+2)
	}
	// A point that a pinned document measured is pinned with it.
	cv, err := CrossValidate(context.Background(), ms, FamilyBy{Rule: "config"}, 0, []string{cpuCalibrate})
	if err != nil {
		t.Fatal(err)
	}
	if len(cv.Predictions) != 1 || cv.Predictions[0].Point.File != again {
		t.Errorf("predicted %d configurations, want the one only the unpinned document ran", len(cv.Predictions))
	}
}

// Where the runs measured a size with rounds and without, the law is the
// witness plus a cost per round, each fitted: a round that costs more than
// the witness is priced so at every size, not folded into one exponent.
func TestSynthesisLawSplitsTheRounds(t *testing.T) {
	witness, round := PowerLaw{A: 1e-7, B: 1}, PowerLaw{A: 1.5e-7, B: 1}
	var points []Point
	for _, n := range []int{1 << 20, 1 << 22} {
		for _, r := range []int{0, 1, 4} {
			w := config.Workload{Constraints: n, SynthesisRounds: r}
			c := float64(n)
			points = append(points, Point{Spec: specOf(w), Synthesis: witness.At(c) + float64(r)*round.At(c), Concurrent: 1, SynthesisMode: SynthesisCompute})
		}
	}
	law, err := (&Model{}).fitSynthesisLaw(points)
	if err != nil {
		t.Fatal(err)
	}
	if law.Witness == nil || law.Round == nil || law.Contention != 0 {
		t.Fatalf("law %+v: want the witness and the round apart, no contention", law)
	}
	w := config.Workload{Constraints: 1 << 24, SynthesisRounds: 2}
	if got, want := law.At(w), witness.At(1<<24)+2*round.At(1<<24); !(math.Abs(got/want-1) <= 1e-6) {
		t.Errorf("at 2^24 with 2 rounds: %v s, want %v", got, want)
	}
	// Computed synthesis is proportional to the constraints by
	// construction: medians 8% apart at two sizes (one run's noise, as on
	// the H200 in docs/results/h200-bias) move the coefficient, never the
	// exponent, so 16 times the size is not priced 35% off.
	noisy := slices.Clone(points)
	for i := range noisy {
		if noisy[i].Spec.Workload.Constraints == 1<<20 {
			noisy[i].Synthesis *= 1.08
		}
	}
	law, err = (&Model{}).fitSynthesisLaw(noisy)
	if err != nil {
		t.Fatal(err)
	}
	if law.Witness.B != 1 || law.Round.B != 1 || law.Alone.B != 1 {
		t.Errorf("exponents witness %v, round %v, alone %v: want 1", law.Witness.B, law.Round.B, law.Alone.B)
	}
	if got, want := law.At(w), witness.At(1<<24)+2*round.At(1<<24); !(math.Abs(got/want-1) <= 0.05) {
		t.Errorf("noisy calibration, at 2^24 with 2 rounds: %v s, want within 5%% of %v", got, want)
	}
	// Rounds at one size only, without rounds at another: no size tells
	// them apart, so one law of constraints × (rounds+1).
	law, err = (&Model{}).fitSynthesisLaw([]Point{points[0], points[4]})
	if err != nil || law.Witness != nil {
		t.Errorf("no size with and without rounds: %+v, %v", law, err)
	}
}

// The spread is measured where the sharing held steady: a pile-up's
// partitions differ by the sharing, which the simulator plays itself.
func TestSynthesisSpreadWhereTheSharingHeld(t *testing.T) {
	points := []Point{
		{Concurrent: 4, SynthConcurrency: 4, SynthesisSpread: 0.08},
		{Concurrent: 2, SynthConcurrency: 1.9, SynthesisSpread: 0.12},
		{Concurrent: 12, SynthConcurrency: 6, SynthesisSpread: 1.3}, // a pile-up
		{Concurrent: 1, SynthConcurrency: 1, SynthesisSpread: 0.10},
	}
	if got := synthesisSpread(points); got != 0.10 {
		t.Errorf("spread %v, want 0.10 (the steady points' median)", got)
	}
	if got := synthesisSpread([]Point{{Concurrent: 1, SynthConcurrency: 1, SynthesisSpread: 0.9}}); got != maxSpread {
		t.Errorf("spread %v, want it bounded at %v", got, maxSpread)
	}
}

// specOf is a configuration of workload w, the rest left zero.
func specOf(w config.Workload) spec.Spec { return spec.Spec{Workload: w} }

// Issue 32 item 14: a document given twice (the same file under another
// name, or a copy of the same run) is refused, not pooled with itself;
// documents that record no commit are told apart by their binary, and
// two binaries are refused unless --allow-mixed-commits, as two commits
// are.
func TestLoadRefusesTheSameRunTwiceAndUnknownBinaries(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs(cpuCalibrate)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json.gz")
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	copied := rewrite(t, cpuCalibrate, dir, "copy.json", func(*results.Run) {})
	for _, files := range [][]string{{cpuCalibrate, cpuCalibrate}, {cpuCalibrate, link}, {cpuCalibrate, copied}} {
		if _, err := Load(t.Context(), files, LoadOptions{AllowMixedCommits: true}); err == nil || !strings.Contains(err.Error(), "given twice") {
			t.Errorf("%v: %v, want a refusal of the document given twice", files, err)
		}
	}

	binary := func(name, sha string, later time.Duration) string {
		return rewrite(t, cpuCalibrate, dir, name, func(d *results.Run) {
			d.Environment.GitCommit, d.ToolVersion, d.ToolSHA256 = "", "(devel)", sha
			d.StartedAt = d.StartedAt.Add(later)
		})
	}
	a := binary("a.json", strings.Repeat("a", 64), time.Hour)
	b := binary("b.json", strings.Repeat("b", 64), 2*time.Hour)
	again := binary("a-again.json", strings.Repeat("a", 64), 3*time.Hour)
	if _, err := Load(t.Context(), []string{a, b}, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "b.json: no commit recorded, binary sha256 bbbb") {
		t.Errorf("two binaries without a commit: %v, want a refusal naming each", err)
	}
	ms, err := Load(t.Context(), []string{a, b}, LoadOptions{AllowMixedCommits: true})
	if err != nil || len(ms.Points) == 0 {
		t.Fatalf("two binaries, allowed: %v", err)
	}
	one, err := Load(t.Context(), []string{a}, LoadOptions{})
	if err != nil || len(one.Points) == 0 {
		t.Fatalf("one binary: %v", err)
	}
	if len(ms.Points) != 2*len(one.Points) {
		t.Errorf("two binaries allowed together: %d points, want %d (never pooled)", len(ms.Points), 2*len(one.Points))
	}
	same, err := Load(t.Context(), []string{a, again}, LoadOptions{})
	if err != nil || len(same.Points) != len(one.Points) || !strings.Contains(strings.Join(same.Notes, "\n"), "no document records the commit") {
		t.Errorf("one binary in two runs: %v, %d points (want %d, pooled), notes %q", err, len(same.Points), len(one.Points), same.Notes)
	}
}

// Contention that grows with the size is fitted as such, and carried to a
// size the runs never had in proportion; contention that does not grow
// stays one figure for every size (docs/results/h200-bias-r3: six
// partitions at once slowed each other about 1% at 2^22, 9% at 2^24).
func TestSynthesisContentionFollowsTheSize(t *testing.T) {
	witness, round := PowerLaw{A: 1e-7, B: 1}, PowerLaw{A: 1.5e-7, B: 1}
	for _, tc := range []struct {
		name     string
		at       func(n int) float64 // the contention the runs had at n constraints
		exponent float64
	}{
		{"proportional", func(n int) float64 { return 0.04 * float64(n) / (1 << 23) }, 1},
		{"constant", func(int) float64 { return 0.05 }, 0},
		{"none", func(int) float64 { return 0 }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var points []Point
			for _, n := range []int{1 << 21, 1 << 22, 1 << 23} {
				for _, r := range []int{0, 1} {
					for _, k := range []int{1, 3, 6} {
						w := config.Workload{Constraints: n, SynthesisRounds: r}
						c := float64(n)
						alone := witness.At(c) + float64(r)*round.At(c)
						points = append(points, Point{Spec: specOf(w), Synthesis: alone * (1 + tc.at(n)*float64(k-1)), Concurrent: k, SynthesisMode: SynthesisCompute})
					}
				}
			}
			law, err := (&Model{}).fitSynthesisLaw(points)
			if err != nil {
				t.Fatal(err)
			}
			if law.ContentionExponent != tc.exponent {
				t.Fatalf("law %+v: contention exponent %v, want %v", law, law.ContentionExponent, tc.exponent)
			}
			if got, want := law.ContentionAt(1<<24), tc.at(1<<24); !(math.Abs(got-want) <= 0.006) {
				t.Errorf("contention at 2^24: %.3f, want %.3f", got, want)
			}
			w := config.Workload{Constraints: 1 << 24, SynthesisRounds: 2}
			if got, want := law.At(w), witness.At(1<<24)+2*round.At(1<<24); !(math.Abs(got/want-1) <= 0.01) {
				t.Errorf("alone at 2^24 with 2 rounds: %v s, want %v", got, want)
			}
		})
	}
}

func TestHostProverTakesMeasuredStageTimes(t *testing.T) {
	// The CPU backend's runs upload nothing: the prover is the host's
	// cores, and its device laws go through the median configuration's
	// measured stage times at each size, not the least.
	ms, err := Load(t.Context(), []string{cpuCalibrate}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ms.Fit(ms.Points)
	if err != nil {
		t.Fatal(err)
	}
	if !m.HostProver || m.PinStall != 0 {
		t.Fatalf("host prover %v, pin stall %g: want true, 0", m.HostProver, m.PinStall)
	}
	sizes, start, finalize := medianStageTimes(m.Points)
	for i, n := range sizes {
		var g, f []float64
		for _, p := range m.Points {
			if float64(p.Spec.Workload.Constraints) == n {
				g, f = append(g, p.GPUStart), append(f, p.Finalize)
			}
		}
		if start[i] != stats.Median(g) || finalize[i] != stats.Median(f) {
			t.Errorf("2^%g: %g %g, want the medians %g %g", math.Log2(n), start[i], finalize[i], stats.Median(g), stats.Median(f))
		}
		if got := m.Finalize.At(n); math.Abs(got/finalize[i]-1) > 1e-6 {
			t.Errorf("finalize law at 2^%g: %g, want %g (two sizes: the law passes through both)", math.Log2(n), got, finalize[i])
		}
	}
	o, err := options(&m.Points[0].Spec, m.Points[0].SynthesisMode, m, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if o.Host.ProverCores != m.Cores {
		t.Errorf("prover cores %d, want the host's %d", o.Host.ProverCores, m.Cores)
	}
}

// Issue 42 case 14: a calibration of 1e-300 s a proof printed a
// 307-character percentage. Figures outside the bounds history add holds
// them to are refused when the calibration loads, and a percentage past
// 10^6 % prints in three significant figures.
func TestCrossValidationFiguresBounded(t *testing.T) {
	if got := signedPercent(1e300); len(got) > 12 {
		t.Errorf("signedPercent(1e300) = %q", got)
	}
	if got := percent(-3e305); len(got) > 12 {
		t.Errorf("percent(-3e305) = %q", got)
	}
	if got := signedPercent(0.123); got != "+12.3%" {
		t.Errorf("signedPercent(0.123) = %q", got)
	}
	dir := t.TempDir()
	tiny := rewrite(t, cpuCalibrate, dir, "tiny.json", func(d *results.Run) {
		for i := range d.Scenarios[0].Repetitions {
			r := &d.Scenarios[0].Repetitions[i]
			r.PartitionsPerSecond = 1e300
		}
	})
	if _, err := Load(t.Context(), []string{tiny}, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "partitions_per_second") {
		t.Errorf("a calibration of 1e300 partitions a second: %v", err)
	}
}
