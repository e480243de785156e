package compare_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/compare"
	"github.com/provebench/provebench/results"
)

// shape describes a synthetic scenario: its throughput's centre and
// relative noise, and its repeats.
type shape struct {
	name     string
	strategy string
	repeats  int
	pps      float64 // partitions per second, median
	noise    float64 // relative standard deviation of throughput and memory
	// varyingPeak makes the waiting_send counter's peak timing-dependent.
	varyingPeak bool
}

const partitions = 20 // per repetition: 2 proofs of 10 partitions

func spec(t *testing.T, channel int) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"name":     "ignored",
		"repeats":  10,
		"workload": map[string]any{"constraints": 1024, "partitions": 10, "proofs": 2, "concurrency": 1},
		"pipeline": map[string]any{"strategy": "hold", "partition_workers": 2, "channel_capacity": channel},
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func makeScenario(t *testing.T, rng *rand.Rand, s shape) results.Scenario {
	t.Helper()
	sc := results.Scenario{
		Name: s.name, Strategy: s.strategy, Backend: "cpu", KeyKind: "random",
		Constraints: 1024, Partitions: 10, Proofs: 2, Spec: spec(t, 2),
	}
	for i := range s.repeats {
		pps := s.pps * (1 + s.noise*rng.NormFloat64())
		wall := partitions / pps
		waiting := int64(2)
		if s.varyingPeak {
			waiting = int64(2 + rng.IntN(4))
		}
		sc.Repetitions = append(sc.Repetitions, results.Repetition{
			Index: i, Status: results.StatusOK,
			WallSeconds: wall, Partitions: partitions, Proofs: 2,
			PartitionsPerSecond: pps, SecondsPerProof: wall / 2,
			Verifiable: true, ProofsVerified: 2,
			PeakRSSBytes:       uint64(float64(3<<30) * (1 + s.noise*rng.NormFloat64())),
			DeviceBusyFraction: new(0.8),
			PeakCounters:       map[string]int64{"abc_bytes": 2 << 20, "in_channel": 2, "waiting_send": waiting, "partitions_done": partitions},
			FinalCounters:      map[string]int64{"abc_bytes": 0, "in_channel": 0, "waiting_send": 0},
		})
	}
	return sc
}

func makeRun(t *testing.T, seed uint64, shapes ...shape) *results.Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	run := &results.Run{
		Schema: results.SchemaVersion, Tool: "provebench", ToolVersion: "test", Complete: true,
		StartedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Environment: results.Environment{
			Hostname: "ci", OS: "linux", Arch: "amd64", CPUModel: "Test CPU", CPUs: 2, GOMAXPROCS: 2, MemoryBytes: 24 << 30,
		},
	}
	for _, s := range shapes {
		run.Scenarios = append(run.Scenarios, makeScenario(t, rng, s))
	}
	return run
}

func mustCompare(t *testing.T, base, cur *results.Run) *compare.Report {
	t.Helper()
	rep, err := compare.Compare(base, cur, compare.Options{GateTimed: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func metric(t *testing.T, rep *compare.Report, scenario, name string) *compare.MetricResult {
	t.Helper()
	s := rep.Scenario(scenario)
	if s == nil {
		t.Fatalf("no scenario %q in report", scenario)
	}
	m := s.Metric(name)
	if m == nil {
		t.Fatalf("no metric %s in scenario %q", name, scenario)
	}
	return m
}

func TestTenPercentThroughputDropIsFlagged(t *testing.T) {
	base := makeRun(t, 1, shape{name: "hold", strategy: "hold", repeats: 10, pps: 10, noise: 0.02})
	cur := makeRun(t, 2, shape{name: "hold", strategy: "hold", repeats: 10, pps: 9, noise: 0.02})
	rep := mustCompare(t, base, cur)
	if !rep.Regressed() {
		t.Fatal("a 10% throughput drop over 10 repeats was not flagged")
	}
	pps := metric(t, rep, "hold", results.PartitionsPerSecond)
	if pps.Verdict != compare.Regression || !(pps.P < 0.05) || !(math.Abs(pps.Change+0.10) <= 0.03) { // NaN fails too
		t.Errorf("partitions/s: verdict %s, p %.4f, change %.3f; want regression, p < 0.05, about -10%%", pps.Verdict, pps.P, pps.Change)
	}
	spp := metric(t, rep, "hold", results.SecondsPerProof)
	if spp.Verdict != compare.Regression || !(spp.Change >= 0.05) {
		t.Errorf("s/proof: verdict %s, change %.3f; want a regression", spp.Verdict, spp.Change)
	}
	// Memory did not move: noise alone.
	if v := metric(t, rep, "hold", results.PeakRSSBytes).Verdict; v == compare.Regression {
		t.Errorf("peak RSS verdict %s with no shift", v)
	}
	if got := rep.Scenario("hold").Verdict; got != compare.Regression {
		t.Errorf("scenario verdict %s", got)
	}
}

func TestNoiseAloneIsNotFlagged(t *testing.T) {
	// Many seeds: a gate that flags noise would do so on some of them.
	for seed := uint64(0); seed < 40; seed++ {
		base := makeRun(t, 2*seed+100, shape{name: "budget", strategy: "budget", repeats: 10, pps: 10, noise: 0.02, varyingPeak: true})
		cur := makeRun(t, 2*seed+101, shape{name: "budget", strategy: "budget", repeats: 10, pps: 10, noise: 0.02, varyingPeak: true})
		rep := mustCompare(t, base, cur)
		if rep.Regressed() {
			var md bytes.Buffer
			rep.WriteMarkdown(&md)
			t.Fatalf("seed %d: noise alone flagged as a regression:\n%s", seed, md.String())
		}
	}
}

func TestImprovementAndSmallSlowdown(t *testing.T) {
	base := makeRun(t, 3,
		shape{name: "faster", strategy: "hold", repeats: 10, pps: 10, noise: 0.02},
		shape{name: "slightly slower", strategy: "hold", repeats: 10, pps: 10, noise: 0.002})
	cur := makeRun(t, 4,
		shape{name: "faster", strategy: "hold", repeats: 10, pps: 11, noise: 0.02},
		shape{name: "slightly slower", strategy: "hold", repeats: 10, pps: 9.8, noise: 0.002})
	rep := mustCompare(t, base, cur)
	if rep.Regressed() {
		t.Error("an improvement and a 2% slowdown (threshold 5%) flagged as a regression")
	}
	if v := metric(t, rep, "faster", results.PartitionsPerSecond).Verdict; v != compare.Better {
		t.Errorf("faster: verdict %s, want better", v)
	}
	if v := metric(t, rep, "slightly slower", results.PartitionsPerSecond).Verdict; v != compare.Worse {
		t.Errorf("2%% slower with little noise: verdict %s, want worse (significant, within threshold)", v)
	}

	// The same slowdown with a 1% threshold is a regression.
	th, err := compare.ParseThresholds("partitions_per_second=1%")
	if err != nil {
		t.Fatal(err)
	}
	rep, err = compare.Compare(base, cur, compare.Options{Thresholds: th, GateTimed: true})
	if err != nil {
		t.Fatal(err)
	}
	if v := metric(t, rep, "slightly slower", results.PartitionsPerSecond).Verdict; v != compare.Regression {
		t.Errorf("2%% slower, threshold 1%%: verdict %s, want regression", v)
	}
}

func TestUngatedMetricDoesNotDecideTheScenario(t *testing.T) {
	sh := shape{name: "s", strategy: "hold", repeats: 8, pps: 10, noise: 0.01}
	base, cur := makeRun(t, 21, sh), makeRun(t, 22, sh)
	for i := range cur.Scenarios[0].Repetitions {
		base.Scenarios[0].Repetitions[i].CPUUserSeconds = 1 + 0.01*float64(i)
		cur.Scenarios[0].Repetitions[i].CPUUserSeconds = 2 + 0.01*float64(i)
	}
	th, err := compare.ParseThresholds("cpu_seconds=off")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := compare.Compare(base, cur, compare.Options{Thresholds: th, GateTimed: true})
	if err != nil {
		t.Fatal(err)
	}
	m := metric(t, rep, "s", results.CPUSeconds)
	if m.Verdict != compare.Worse || m.Gated() {
		t.Fatalf("cpu_seconds doubled: verdict %s, gated %v; want worse, not gated", m.Verdict, m.Gated())
	}
	if v := rep.Scenario("s").Verdict; v == compare.Worse || v == compare.Regression {
		t.Errorf("scenario verdict %s from an ungated metric", v)
	}
}

func TestTooFewSamplesIsInconclusiveNeverARegression(t *testing.T) {
	base := makeRun(t, 5, shape{name: "s", strategy: "hold", repeats: 3, pps: 10, noise: 0.01})
	cur := makeRun(t, 6, shape{name: "s", strategy: "hold", repeats: 3, pps: 7, noise: 0.01})
	rep := mustCompare(t, base, cur)
	m := metric(t, rep, "s", results.PartitionsPerSecond)
	// Gated (--gate-timed) but the test could not look: not a pass.
	if m.Verdict != compare.Inconclusive || rep.Regressed() || rep.Outcome() != compare.NotJudged {
		t.Errorf("3 repeats, -30%%: verdict %s (regressed %v, outcome %v), want %q and no regression", m.Verdict, rep.Regressed(), rep.Outcome(), compare.Inconclusive)
	}
	if !strings.Contains(m.Note, "samples") {
		t.Errorf("note %q does not say how many samples are needed", m.Note)
	}
}

func TestExactFigures(t *testing.T) {
	sh := shape{name: "s", strategy: "hold", repeats: 5, pps: 10, noise: 0.01}

	t.Run("failed repetition", func(t *testing.T) {
		base, cur := makeRun(t, 7, sh), makeRun(t, 8, sh)
		r := &cur.Scenarios[0].Repetitions[4]
		r.Status, r.Error = results.StatusMemoryLimit, "RSS 30 GiB passed the limit"
		rep := mustCompare(t, base, cur)
		m := metric(t, rep, "s", results.FailedRepetitions)
		if m.Verdict != compare.Regression || m.Base.Center != 0 || m.New.Center != 1 {
			t.Errorf("failed repetitions %v → %v: verdict %s, want regression", m.Base.Center, m.New.Center, m.Verdict)
		}
		var md bytes.Buffer
		if err := rep.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "`failed_repetitions`: 0 → 1 (+1; exact figures; threshold 0%)") {
			t.Errorf("regression line not found in:\n%s", md.String())
		}
		if got := rep.Scenario("s").NewStatus; got != "4 ok, 1 memory-limit" {
			t.Errorf("new status %q", got)
		}
	})

	t.Run("counter not at zero", func(t *testing.T) {
		base, cur := makeRun(t, 7, sh), makeRun(t, 8, sh)
		cur.Scenarios[0].Repetitions[2].FinalCounters["in_channel"] = 1
		rep := mustCompare(t, base, cur)
		if m := metric(t, rep, "s", "final_counters.in_channel"); m.Verdict != compare.Regression {
			t.Errorf("final in_channel 0 → 1: verdict %s, want regression", m.Verdict)
		}
	})

	t.Run("exact peak grew", func(t *testing.T) {
		base, cur := makeRun(t, 7, sh), makeRun(t, 8, sh)
		for i := range cur.Scenarios[0].Repetitions {
			cur.Scenarios[0].Repetitions[i].PeakCounters["abc_bytes"] = 3 << 20
		}
		rep := mustCompare(t, base, cur)
		m := metric(t, rep, "s", "peak_counters.abc_bytes")
		if !m.Exact || m.Verdict != compare.Regression || m.Unit != results.UnitByte {
			t.Errorf("abc_bytes peak 2 → 3 MiB in every repetition: exact %v, verdict %s, unit %s; want an exact regression in bytes", m.Exact, m.Verdict, m.Unit)
		}
		// Allowed with a 60% threshold for that counter.
		th, err := compare.ParseThresholds("peak_counters.abc_bytes=60%")
		if err != nil {
			t.Fatal(err)
		}
		rep, err = compare.Compare(base, cur, compare.Options{Thresholds: th, GateTimed: true})
		if err != nil {
			t.Fatal(err)
		}
		if m := metric(t, rep, "s", "peak_counters.abc_bytes"); m.Verdict != compare.Worse {
			t.Errorf("with threshold 60%%: verdict %s, want worse", m.Verdict)
		}
	})

	t.Run("event counts are not compared as peaks", func(t *testing.T) {
		base, cur := makeRun(t, 7, sh), makeRun(t, 8, sh)
		for i := range cur.Scenarios[0].Repetitions {
			cur.Scenarios[0].Repetitions[i].PeakCounters["partitions_done"] = partitions + 1
		}
		rep := mustCompare(t, base, cur)
		if m := rep.Scenario("s").Metric("peak_counters.partitions_done"); m != nil {
			t.Errorf("partitions_done (no final value: an event count) compared as a peak: %s", m.Verdict)
		}
	})

	t.Run("varying peak is sampled", func(t *testing.T) {
		v := sh
		v.varyingPeak, v.repeats = true, 10
		rep := mustCompare(t, makeRun(t, 9, v), makeRun(t, 10, v))
		m := metric(t, rep, "s", "peak_counters.waiting_send")
		if m.Exact || m.Verdict == compare.Regression {
			t.Errorf("timing-dependent peak: exact %v, verdict %s; want a sampled comparison without regression", m.Exact, m.Verdict)
		}
	})

	t.Run("varying peak shift is gated only when asked", func(t *testing.T) {
		v := sh
		v.varyingPeak, v.repeats = true, 10
		base, cur := makeRun(t, 9, v), makeRun(t, 10, v)
		for i := range cur.Scenarios[0].Repetitions {
			cur.Scenarios[0].Repetitions[i].PeakCounters["waiting_send"] += 4
		}
		rep := mustCompare(t, base, cur)
		m := metric(t, rep, "s", "peak_counters.waiting_send")
		if m.Exact || m.Verdict != compare.Worse || !strings.Contains(m.Note, "gated only with a threshold") {
			t.Errorf("varying peak up by 4 partitions, default thresholds: exact %v, verdict %s, note %q; want worse, not gated", m.Exact, m.Verdict, m.Note)
		}
		th, err := compare.ParseThresholds("peak_counters.waiting_send=25%")
		if err != nil {
			t.Fatal(err)
		}
		rep, err = compare.Compare(base, cur, compare.Options{Thresholds: th, GateTimed: true})
		if err != nil {
			t.Fatal(err)
		}
		if m := metric(t, rep, "s", "peak_counters.waiting_send"); m.Verdict != compare.Regression {
			t.Errorf("with a 25%% threshold: verdict %s, want regression", m.Verdict)
		}
	})

	t.Run("unverified proof", func(t *testing.T) {
		base, cur := makeRun(t, 7, sh), makeRun(t, 8, sh)
		cur.Scenarios[0].Repetitions[0].ProofsVerified = 1
		rep := mustCompare(t, base, cur)
		if m := metric(t, rep, "s", results.UnverifiedProofs); m.Verdict != compare.Regression {
			t.Errorf("a proof failed to verify: verdict %s, want regression", m.Verdict)
		}
	})
}

func TestGPUFiguresAbsent(t *testing.T) {
	sh := shape{name: "s", strategy: "hold", repeats: 5, pps: 10, noise: 0.01}
	base, cur := makeRun(t, 11, sh), makeRun(t, 12, sh)
	for i := range base.Scenarios[0].Repetitions {
		v := uint64(5 << 30)
		base.Scenarios[0].Repetitions[i].PeakGPUMemoryBytes = &v
	}
	base.Environment.NVML = true
	if _, err := compare.Compare(base, cur, compare.Options{}); !errors.Is(err, compare.ErrHardware) {
		t.Fatalf("NVML in base only: err %v, want ErrHardware (the GPUs cannot be told to be the same)", err)
	}
	rep, err := compare.Compare(base, cur, compare.Options{AllowDifferentHardware: true})
	if err != nil {
		t.Fatal(err)
	}
	m := metric(t, rep, "s", results.PeakGPUMemoryBytes)
	if m.Verdict != compare.NoData || m.New != nil || !strings.Contains(m.Note, "NVML") {
		t.Errorf("GPU figures absent in new: verdict %s, new %v, note %q; want no data, n/a", m.Verdict, m.New, m.Note)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "GPUs differ") {
		t.Errorf("warnings %q do not mention the GPU difference", rep.Warnings)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "n/a") {
		t.Error("markdown does not show n/a for the absent GPU figure")
	}
}

func TestMissingAndAddedScenarios(t *testing.T) {
	a := shape{name: "a", strategy: "hold", repeats: 5, pps: 10, noise: 0.01}
	b := shape{name: "b", strategy: "release", repeats: 5, pps: 10, noise: 0.01}
	c := shape{name: "c", strategy: "pacer", repeats: 5, pps: 10, noise: 0.01}
	cur := makeRun(t, 14, a, c)
	cur.Complete = false
	rep := mustCompare(t, makeRun(t, 13, a, b), cur)
	if got := rep.Scenario("b").Verdict; got != compare.Missing {
		t.Errorf("b: verdict %s, want missing", got)
	}
	if got := rep.Scenario("c").Verdict; got != compare.Added {
		t.Errorf("c: verdict %s, want new", got)
	}
	if rep.Regressed() {
		t.Error("a missing scenario is reported, not a regression")
	}
	var txt bytes.Buffer
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if rep.Outcome() != compare.Incomplete {
		t.Errorf("outcome %v, want Incomplete", rep.Outcome())
	}
	// The headline says what the exit status (2) says, not "OK".
	if !strings.HasPrefix(txt.String(), "provebench compare: INCOMPLETE: ") {
		t.Errorf("headline: %q", strings.SplitN(txt.String(), "\n", 2)[0])
	}
	for _, want := range []string{"the new run lacks 1 of the baseline's configurations: \"b\"", "1 without a baseline", "incomplete"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, txt.String())
		}
	}
}

func TestMismatchedRuns(t *testing.T) {
	sh := shape{name: "hold pw=2", strategy: "hold", repeats: 3, pps: 10, noise: 0.01}
	other := shape{name: "release pw=2", strategy: "release", repeats: 3, pps: 10, noise: 0.01}

	_, err := compare.Compare(makeRun(t, 1, sh), makeRun(t, 2, other), compare.Options{})
	if !errors.Is(err, compare.ErrMismatch) || !strings.Contains(err.Error(), `"hold pw=2"`) || !strings.Contains(err.Error(), `"release pw=2"`) {
		t.Errorf("no common scenario: %v", err)
	}

	cur := makeRun(t, 2, sh)
	cur.Scenarios[0].Constraints = 2048
	cur.Scenarios[0].Spec = spec(t, 4)
	_, err = compare.Compare(makeRun(t, 1, sh), cur, compare.Options{})
	if !errors.Is(err, compare.ErrMismatch) {
		t.Fatalf("changed configuration: %v, want ErrMismatch", err)
	}
	for _, want := range []string{"constraints is 1024 in base, 2048 in new", "pipeline.channel_capacity is 2 in base, 4 in new", "refresh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	empty := makeRun(t, 3)
	if _, err := compare.Compare(empty, cur, compare.Options{}); !errors.Is(err, compare.ErrMismatch) {
		t.Errorf("empty base: %v", err)
	}
	if _, err := compare.Compare(makeRun(t, 1, sh), makeRun(t, 2, sh), compare.Options{Alpha: 1.5}); err == nil {
		t.Error("alpha 1.5 accepted")
	}
}

func TestCompareFilesBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := results.Write(good, makeRun(t, 1, shape{name: "s", strategy: "hold", repeats: 3, pps: 10, noise: 0.01})); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"missing file", filepath.Join(dir, "nope.json"), []string{"nope.json", "no such file"}},
		{"not JSON", write("garbage.json", "this is not json"), []string{"garbage.json", "not a provebench results document"}},
		{"other schema", write("v9.json", `{"schema": 9, "tool": "provebench"}`), []string{"v9.json", "schema 9"}},
		{"other tool", write("other.json", `{"schema": 1, "tool": "hyperfine"}`), []string{"other.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compare.CompareFiles(t.Context(), good, tc.path, compare.Options{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	rep, err := compare.CompareFiles(t.Context(), good, good, compare.Options{})
	if err != nil || rep.Regressed() {
		t.Errorf("a file against itself: %v, regressed %v", err, rep != nil && rep.Regressed())
	}
}

func TestParseThresholds(t *testing.T) {
	th, err := compare.ParseThresholds(" seconds_per_proof=3% , peak_rss_bytes=off,peak_counters.waiting_send=0.5,final_counters=0%")
	if err != nil {
		t.Fatal(err)
	}
	check := func(metric string, want float64, gated bool) {
		t.Helper()
		got, set := th.For(metric)
		ok := set && !math.IsInf(got, 1)
		if ok != gated || (gated && !(math.Abs(got-want) <= 1e-12)) {
			t.Errorf("%s: %v (gated %v), want %v (gated %v)", metric, got, ok, want, gated)
		}
	}
	check(results.SecondsPerProof, 0.03, true)
	check(results.PartitionsPerSecond, 0.05, true) // default kept
	check(results.PeakRSSBytes, 0, false)
	check("peak_counters.waiting_send", 0.5, true)
	check("peak_counters.abc_bytes", 0, false)  // no entry: Compare's counter defaults apply
	check("final_counters.in_channel", 0, true) // family entry
	check(results.DeviceBusyFraction, 0, false)

	if th, err := compare.ParseThresholds(""); err != nil || len(th) != len(compare.DefaultThresholds()) {
		t.Errorf("empty spec: %v, %v", th, err)
	}
	for spec, want := range map[string]string{
		"seconds_per_proof":       "want metric=value",
		"throughput=5%":           `unknown metric "throughput"`,
		"seconds_per_proof=fast":  "want a percentage",
		"seconds_per_proof=-5%":   "negative",
		"seconds_per_proof=5":     "ambiguous",
		"peak_counters.=5%":       "unknown metric",
		"seconds_per_proof=NaN%":  "want a percentage",
		"peak_rss_bytes=10%,x=1%": `unknown metric "x"`,
	} {
		_, err := compare.ParseThresholds(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseThresholds(%q) = %v, want an error with %q", spec, err, want)
		}
	}
	// String round-trips.
	again, err := compare.ParseThresholds(th.String())
	if err != nil || again.String() != th.String() {
		t.Errorf("round trip: %q -> %q (%v)", th.String(), again.String(), err)
	}
}

func TestReportOutputs(t *testing.T) {
	base := makeRun(t, 1,
		shape{name: "hold | pw=2", strategy: "hold", repeats: 10, pps: 10, noise: 0.02},
		shape{name: "budget", strategy: "budget", repeats: 10, pps: 10, noise: 0.02})
	cur := makeRun(t, 2,
		shape{name: "hold | pw=2", strategy: "hold", repeats: 10, pps: 9, noise: 0.02},
		shape{name: "budget", strategy: "budget", repeats: 10, pps: 10, noise: 0.02})
	rep := mustCompare(t, base, cur)

	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{
		"❌", "#### Regressions", `hold \| pw=2`, "budget", "| Scenario | Strategy | Verdict |",
		"`partitions_per_second`", "<details open><summary>hold | pw=2: regression</summary>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// Every table row has the header's column count (the | in the name is escaped).
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| hold") {
			rows++
			if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 10 {
				t.Errorf("overview row has %d separators, want 10: %s", n, line)
			}
		}
	}
	if rows == 0 {
		t.Error("markdown has no overview row of hold to count")
	}

	var txt bytes.Buffer
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(txt.String(), "provebench compare: REGRESSION") || !strings.Contains(txt.String(), "partitions_per_second") {
		t.Errorf("text report:\n%s", txt.String())
	}

	summary := filepath.Join(t.TempDir(), "step-summary.md")
	if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rep.AppendMarkdown(summary); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "earlier step\n### provebench compare") {
		t.Errorf("step summary not appended: %.80q", data)
	}
	t.Logf("markdown:\n%s\ntext:\n%s", out, txt.String())
}

func TestStoredRunsGateOnlyExactFiguresByDefault(t *testing.T) {
	base := makeRun(t, 1, shape{name: "hold", strategy: "hold", repeats: 10, pps: 10, noise: 0.02})
	cur := makeRun(t, 2, shape{name: "hold", strategy: "hold", repeats: 10, pps: 8, noise: 0.02})
	rep, err := compare.Compare(base, cur, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Regressed() {
		t.Error("a 20% throughput drop between stored runs failed the gate without --gate-timed")
	}
	m := metric(t, rep, "hold", results.PartitionsPerSecond)
	if m.Verdict != compare.Worse || m.Gated() || !strings.Contains(m.Note, "not gated") {
		t.Errorf("verdict %s, gated %v, note %q; want worse, not gated, saying so", m.Verdict, m.Gated(), m.Note)
	}
	rep, err = compare.Compare(base, cur, compare.Options{GateTimed: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Regressed() || !strings.Contains(strings.Join(rep.Warnings, "\n"), "risk") && !strings.Contains(strings.Join(rep.Warnings, "\n"), "different times") {
		t.Errorf("--gate-timed: regressed %v, warnings %q; want a regression and the risk stated", rep.Regressed(), rep.Warnings)
	}
}

func TestDifferentHardwareIsRefused(t *testing.T) {
	sh := shape{name: "s", strategy: "hold", repeats: 5, pps: 10, noise: 0.01}
	base, cur := makeRun(t, 1, sh), makeRun(t, 2, sh)
	cur.Environment.CPUModel, cur.Environment.CPUs = "Other CPU", 64
	cur.Scenarios[0].Backend = "cuda"
	_, err := compare.Compare(base, cur, compare.Options{})
	if !errors.Is(err, compare.ErrHardware) {
		t.Fatalf("err %v, want ErrHardware", err)
	}
	for _, want := range []string{`cpu_model: "Test CPU" in base, "Other CPU" in new`, "cpus: 2 in base, 64 in new", `scenario "s": backend: cpu in base, cuda in new`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := compare.Compare(base, cur, compare.Options{AllowDifferentHardware: true}); err != nil {
		t.Errorf("allowed: %v", err)
	}
}

func TestAbsentMetricsSayWhy(t *testing.T) {
	sh := shape{name: "s", strategy: "hold", repeats: 5, pps: 10, noise: 0.01}
	rep := mustCompare(t, makeRun(t, 1, sh), makeRun(t, 2, sh))
	if m := metric(t, rep, "s", results.SteadyDeviceBusyFraction); m.Verdict != compare.NoData || !strings.Contains(m.Note, "steady state") {
		t.Errorf("steady busy absent: verdict %s, note %q", m.Verdict, m.Note)
	}
	if m := metric(t, rep, "s", results.PeakGPUMemoryBytes); !strings.Contains(m.Note, "NVML") {
		t.Errorf("GPU memory absent: note %q", m.Note)
	}
}
