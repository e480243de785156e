package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// The committed frozen prediction of docs/results/h200-porep and its runs:
// the figures its README reports (partitions/s p90 8.0%, peak RSS p90
// 6.9%, release's wall predicted right), within 10% and not within 5%.
func TestPorepPrediction(t *testing.T) {
	const dir = "../../docs/results/h200-porep/"
	var out, errOut bytes.Buffer
	if code := run([]string{"-target", "10%", dir + "prediction", dir + "runs"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, want 0:\n%s%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{
		"| release-c1 | memory-limit | ok 0, memory-limit 3 |",
		"| pacer | ok | ok 3 | 1.144 | 1.243 | -7.9% | 62.2 GiB | 58.2 GiB | +6.9% |",
		"partitions/s |error| over 4 configurations: median 0.9%, p90 7.9% (within the target 10%)",
		"peak RSS (kernel) |error| over 4 configurations: median 0.0%, p90 6.9% (within the target 10%)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"-target", "5%", dir + "prediction", dir + "runs"}, &out, &errOut); code != exitMissed {
		t.Errorf("-target 5%%: exit %d, want %d:\n%s", code, exitMissed, out.String())
	}
}

func TestRefusesBadInput(t *testing.T) {
	const dir = "../../docs/results/h200-porep/"
	for _, args := range [][]string{
		{dir + "runs", dir + "prediction"}, // the wrong way round
		{dir + "prediction"},
		{"-target", "ten", dir + "prediction", dir + "runs"},
		{dir + "prediction", dir + "no-such-folder"},
	} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != exitUsage || errOut.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q: want 2 and a message", args, code, errOut.String())
		}
	}
}

// doc is a results document of one repetition per configuration.
func doc(simulated bool, reps map[string][]results.Repetition, order ...string) *results.Run {
	d := &results.Run{}
	if simulated {
		d.Simulated = &results.Simulation{}
	}
	for _, name := range order {
		d.Scenarios = append(d.Scenarios, results.Scenario{Name: name, Repetitions: reps[name]})
	}
	return d
}

func ok(pps float64, rss uint64) results.Repetition {
	return results.Repetition{Status: results.StatusOK, PartitionsPerSecond: pps, PeakRSSBytes: rss}
}

var stopped = results.Repetition{Status: results.StatusMemoryLimit, PeakRSSBytes: 9 << 30}

func TestJudge(t *testing.T) {
	pred := doc(true, map[string][]results.Repetition{
		"a": {ok(1.0, 10<<30)}, "b": {ok(2.0, 10<<30)}, "wall": {stopped}, "cut": {ok(1, 1<<30)},
	}, "a", "b", "wall", "cut")
	runs := doc(false, map[string][]results.Repetition{
		// a: the median of 0.8, 1.0, 1.25 is 1.0; a warm-up is not measured.
		"a":    {{Warmup: true, Status: results.StatusOK, PartitionsPerSecond: 9, PeakRSSBytes: 1}, ok(0.8, 11<<30), ok(1.25, 11<<30), ok(1.0, 11<<30)},
		"b":    {ok(2.5, 10<<30), ok(2.5, 10<<30)},
		"wall": {stopped, stopped},
		"cut":  {{Status: results.StatusCancelled}},
	}, "a", "b", "wall", "cut")
	j := judge(pred, runs)
	if len(j.rows) != 4 {
		t.Fatalf("%d rows, want 4", len(j.rows))
	}
	pps := j.spread(0)
	if pps.N != 2 || math.IsNaN(pps.P90) {
		t.Fatalf("partitions/s judged over %d configurations, p90 %v: want 2 and a figure", pps.N, pps.P90)
	}
	if math.Abs(pps.P90-0.2) > 1e-9 || math.Abs(pps.Median-0.1) > 1e-9 { // a 0%, b -20%
		t.Errorf("partitions/s p90 %v median %v, want 0.2 and 0.1", pps.P90, pps.Median)
	}
	if rss := j.spread(1); rss.N != 2 || math.Abs(rss.Max-1.0/11) > 1e-9 {
		t.Errorf("peak RSS over %d, max %v: want 2 and 1/11", rss.N, rss.Max)
	}
	if !j.rows[2].outcomeRight() || j.rows[3].ran() {
		t.Errorf("the wall predicted and met must be right, the cancelled one not run: %+v %+v", j.rows[2], j.rows[3])
	}
	// Within 25%, but cut never ran: the prediction fails, naming it.
	if code := j.status(0.25); code != exitMissed {
		t.Errorf("status at 25%% with cut not run: %d, want 3", code)
	}
	var out bytes.Buffer
	j.write(&out, "pred", "runs", 0.10)
	for _, want := range []string{"| cut | ok | **not run** |", "**not judged**, so the prediction fails whatever the errors: cut: not run\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the configuration not run is not named (%q):\n%s", want, out.String())
		}
	}
	// Without cut, the errors decide.
	pred.Scenarios, runs.Scenarios = pred.Scenarios[:3], runs.Scenarios[:3]
	j = judge(pred, runs)
	if code := j.status(0.25); code != exitOK {
		t.Errorf("status at 25%%: %d, want 0", code)
	}
	if code := j.status(0.10); code != exitMissed {
		t.Errorf("status at 10%%: %d, want 3", code)
	}
}

// One configuration of four run, within the target: not a pass (issue 43
// found r4's prediction judged "within the target" so).
func TestJudgeOneOfFourRun(t *testing.T) {
	reps := map[string][]results.Repetition{"a": {ok(1, 1<<30)}, "b": {ok(1, 1<<30)}, "c": {ok(1, 1<<30)}, "d": {ok(1, 1<<30)}}
	j := judge(doc(true, reps, "a", "b", "c", "d"), doc(false, reps, "a"))
	if code := j.status(0.10); code != exitMissed {
		t.Fatalf("1 of 4 run: status %d, want 3", code)
	}
	if got := strings.Join(j.unjudged(), "; "); got != "b: not run; c: not run; d: not run" {
		t.Errorf("unjudged %q, want b, c and d named", got)
	}
}

// A figure that is not finite, predicted or measured, fails the
// prediction and is named, though the other metric is exact.
func TestJudgeNotFinite(t *testing.T) {
	for _, tc := range []struct {
		name       string
		pred, runs results.Repetition
		want       string
	}{
		{"predicted NaN", ok(math.NaN(), 1<<30), ok(1, 1<<30), "a: partitions/s predicted is NaN"},
		{"predicted +Inf", ok(math.Inf(1), 1<<30), ok(1, 1<<30), "a: partitions/s predicted is +Inf"},
		{"measured absent", ok(1, 1<<30), ok(1, 0), "a: peak RSS (kernel) measured is NaN"},
	} {
		j := judge(doc(true, map[string][]results.Repetition{"a": {tc.pred}}, "a"),
			doc(false, map[string][]results.Repetition{"a": {tc.runs}}, "a"))
		if code := j.status(0.10); code != exitMissed {
			t.Errorf("%s: status %d, want 3", tc.name, code)
		}
		if got := strings.Join(j.unjudged(), "; "); got != tc.want {
			t.Errorf("%s: unjudged %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestJudgeOutcomes(t *testing.T) {
	pred := doc(true, map[string][]results.Repetition{"a": {ok(1, 1<<30)}, "b": {stopped}}, "a", "b")
	// a stopped where it was predicted to finish: wrong, whatever the errors.
	wrong := judge(pred, doc(false, map[string][]results.Repetition{"a": {stopped}, "b": {stopped}}, "a", "b"))
	if code := wrong.status(0.5); code != exitMissed {
		t.Errorf("a wall not predicted: status %d, want 3", code)
	}
	// b finished where it was predicted to stop: wrong too.
	wrong = judge(pred, doc(false, map[string][]results.Repetition{"a": {ok(1, 1<<30)}, "b": {ok(1, 1<<30)}}, "a", "b"))
	if code := wrong.status(0.5); code != exitMissed {
		t.Errorf("a wall predicted and not met: status %d, want 3", code)
	}
	// Nothing ran: nothing judged, which is no pass.
	none := judge(pred, doc(false, map[string][]results.Repetition{"x": {ok(1, 1<<30)}}, "x"))
	if code := none.status(0.5); code != exitInconclusive {
		t.Errorf("nothing judged: status %d, want 4", code)
	}
}
