package predict

import (
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/provebench/provebench/internal/stats"
)

// stageErrors is each stage's median signed error, predicted against
// measured, over checks: synthesis per mode, the NTT region, the MSMs
// and the upload.
func stageErrors(m *Model, checks []Check) map[string]float64 {
	errs := map[string][]float64{}
	add := func(stage string, pred, meas float64) {
		if meas > 0 {
			errs[stage] = append(errs[stage], pred/meas-1)
		}
	}
	for _, c := range checks {
		p := c.Point
		n := float64(p.Spec.Workload.Constraints)
		add("synthesis "+p.SynthesisMode, c.Synthesis, p.Synthesis)
		add("ntt", c.GPUStart, measuredDevice(p.DeviceGPUStart, p.GPUStart))
		add("msms", c.Finalize, measuredDevice(p.DeviceFinalize, p.Finalize))
		if p.PageableBytes == 0 {
			add("upload", m.Upload.At(n), p.Upload)
		}
	}
	out := map[string]float64{}
	for stage, e := range errs {
		out[stage] = stats.Median(e)
	}
	return out
}

// measuredDevice is the device's own time where the runs recorded it,
// else the engine's stage time.
func measuredDevice(device, engine float64) float64 {
	if device > 0 {
		return device
	}
	return engine
}

// TestH200StageLawsExtrapolate fits the stage laws on the designated
// calibration set (docs/results/h200-validation) up to one size and
// checks each stage on a larger size it never saw: fitted on 2^21-2^23,
// the set's own 2^24 runs and h200-bias-r4's (another day's, computed
// synthesis); fitted on 2^21-2^24, h200-porep's 2^25 runs (cached
// witness, GPU-bound). Each stage's median signed error is logged and
// held to a bound: 15% (the issue's), but 20% for the NTT region, which at
// 2^25 took 2.4 times 2^24's time, more than its work grew, and no law
// fitted up to 2^24 sees that; and none for computed synthesis, which
// h200-bias-r4's runs measured on another day, 30% slower per constraint
// than the calibration's (the host, not the law: docs/results/h200-bias-r4).
func TestH200StageLawsExtrapolate(t *testing.T) {
	bounds := map[string]float64{"ntt": 0.20, "msms": 0.15, "upload": 0.15, "synthesis cached": 0.15}
	const dir = "../docs/results/h200-validation/"
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
	}{
		{"2^21-2^23 to 2^24", 1 << 23, []string{"../docs/results/h200-bias-r4/runs/results.json.gz"}, true},
		{"2^21-2^24 to 2^25", 1 << 24, []string{"../docs/results/h200-porep/runs/results.json.gz"}, false},
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
			errs := stageErrors(m, checks)
			for _, stage := range slices.Sorted(maps.Keys(errs)) {
				t.Logf("%s: %s median error %+.1f%%", tc.name, stage, 100*errs[stage])
			}
			for stage, bound := range bounds {
				if e, ok := errs[stage]; ok && !(math.Abs(e) <= bound) {
					t.Errorf("%s: %s median error %+.1f%%, want within %.0f%%", tc.name, stage, 100*e, 100*bound)
				}
			}
			for _, stage := range []string{"ntt", "msms", "upload"} {
				if _, ok := errs[stage]; !ok {
					t.Errorf("%s: no %s checked", tc.name, stage)
				}
			}
		})
	}
}
