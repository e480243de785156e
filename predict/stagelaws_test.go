package predict

import (
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/provebench/provebench/internal/stats"
)

// TestH200StageLawsExtrapolate fits the stage laws on the designated
// calibration set (docs/results/h200-validation) up to one size and
// checks each stage on a larger size it never saw: fitted on 2^21-2^23,
// the set's own 2^24 runs and h200-bias-r4's (another day's, computed
// synthesis); fitted on 2^21-2^24, h200-porep's 2^25 runs (cached
// witness, GPU-bound) and the gate's 2^26 runs (big26-0b3fb1b, two
// machines). Each stage's median signed error is logged and held to a
// bound: 15% (the issue's), but 20% for the NTT region, which at 2^25
// took 2.4 times 2^24's time, more than its work grew, and no law fitted
// up to 2^24 sees that; and none for computed synthesis, which
// h200-bias-r4's runs measured on another day, 30% slower per constraint
// than the calibration's (the host, not the law: docs/results/h200-bias-r4).
// At 2^26 the witness copy is held to 25%: the gate's two machines
// copied at 1.66-1.80 and 1.40-1.45 s a partition, 20% apart, and a law
// from a third machine's calibration cannot be within 15% of both (the
// reason the frozen tests calibrate on their own machine:
// docs/results/h200-frozen26). The precompute factor the GPU memory law
// gives each size must be the one the held-out runs recorded (8 at 2^25,
// 4 at 2^26), and its setup (the time before the clock, part by part) is
// checked beside the stages.
func TestH200StageLawsExtrapolate(t *testing.T) {
	bounds := map[string]float64{StageNTT: 0.20, StageMSMs: 0.15, StageUpload: 0.15, "synthesis cached": 0.15, StageGPUMemory: 0.15, StageSetup: 0.15}
	const dir, big26 = "../docs/results/h200-validation/", "../docs/results/h200-gate/big26-0b3fb1b/"
	ms, err := Load(t.Context(), []string{dir + "calibration/results.json.gz", dir + "interleaved21/results.json.gz",
		dir + "validation-big24-mid23/results.json.gz", dir + "validation-pileup22-ramp22/results.json.gz"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	upTo := func(size int) (in, out []Point) {
		for _, p := range ms.Points {
			if p.Spec.Workload.Constraints <= size {
				in = append(in, p)
			} else {
				out = append(out, p)
			}
		}
		return in, out
	}
	hostMemory := int64(ms.Environment.MemoryBytes)
	for _, tc := range []struct {
		name      string
		fitUpTo   int
		heldOut   []string // further documents at the larger size
		ownLarger bool     // the set's own larger runs are held out too
		wider     map[string]float64
	}{
		{"2^21-2^23 to 2^24", 1 << 23, []string{"../docs/results/h200-bias-r4/runs/results.json.gz"}, true, nil},
		{"2^21-2^24 to 2^25", 1 << 24, []string{"../docs/results/h200-porep/runs/results.json.gz"}, false, nil},
		{"2^21-2^24 to 2^26", 1 << 24, []string{big26 + "identical-big26-1/base", big26 + "identical-big26-1/new",
			big26 + "identical-big26-2/base", big26 + "identical-big26-2/new"}, false, map[string]float64{"synthesis cached": 0.25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, larger := upTo(tc.fitUpTo)
			m, err := ms.Fit(in)
			if err != nil {
				t.Fatal(err)
			}
			var checks []Check
			if tc.ownLarger {
				if checks, err = m.check(larger, hostMemory); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tc.heldOut {
				c, _, err := m.CheckDocument(t.Context(), f, hostMemory)
				if err != nil {
					t.Fatal(err)
				}
				checks = append(checks, c...)
			}
			for _, c := range checks {
				w := c.Point.Spec.Workload
				if got, want := m.GPUMemory.Factor(w), c.Point.Precompute; want > 0 && got != want {
					t.Errorf("%s: %s at %s: precompute factor %d, the run recorded %d", tc.name, c.Point.Scenario, pow2(w.Constraints), got, want)
				}
			}
			errs := map[string]float64{}
			for _, e := range StageErrors(checks) {
				errs[e.Stage] = e.Median
			}
			// The GPU memory law against a line through the calibration's
			// totals, which carries ×8 bases to sizes the backend halves.
			var xs, ys, naive []float64
			for _, p := range in {
				if p.PeakGPU > 0 {
					xs, ys = append(xs, float64(p.Spec.Workload.Constraints)), append(ys, p.PeakGPU)
				}
			}
			line := fitLinear(xs, ys)
			for _, c := range checks {
				if c.Point.PeakGPU > 0 {
					naive = append(naive, line.At(float64(c.Point.Spec.Workload.Constraints))/c.Point.PeakGPU-1)
				}
			}
			if e, ok := errs[StageGPUMemory]; ok {
				t.Logf("%s: gpu memory through the totals: median error %+.1f%%", tc.name, 100*stats.Median(naive))
				if math.Abs(e) > math.Abs(stats.Median(naive))+0.005 {
					t.Errorf("%s: gpu memory median error %+.1f%%, worse than a line through the totals (%+.1f%%)", tc.name, 100*e, 100*stats.Median(naive))
				}
			}
			for _, stage := range slices.Sorted(maps.Keys(errs)) {
				t.Logf("%s: %s median error %+.1f%%", tc.name, stage, 100*errs[stage])
			}
			for stage, bound := range bounds {
				if w, ok := tc.wider[stage]; ok {
					bound = w
				}
				if e, ok := errs[stage]; ok && !(math.Abs(e) <= bound) {
					t.Errorf("%s: %s median error %+.1f%%, want within %.0f%%", tc.name, stage, 100*e, 100*bound)
				}
			}
			for _, stage := range []string{StageNTT, StageMSMs, StageUpload, StageGPUMemory, StageSetup} {
				if _, ok := errs[stage]; !ok {
					t.Errorf("%s: no %s checked", tc.name, stage)
				}
			}
		})
	}
}
