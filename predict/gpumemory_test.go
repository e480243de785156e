package predict_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/provebench/provebench/gpu/shape"
	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/scenarios"
)

const gpuMemoryScenario = `
version: 1
defaults:
  backend: cuda
  key: random
  workload: {partitions: 4, proofs: 1, concurrency: 1, synthesis: cached, synthesis_rounds: 0}
  pipeline: {strategy: hold, partition_workers: 2, channel_capacity: 1, gpu_workers: 1}
scenarios:
  - name: at24
    workload: {constraints: 2^24}
  - name: at26
    workload: {constraints: 2^26}
`

// TestSimulatedGPUMemoryFollowsTheBackendsFactor: calibrated on
// docs/results/h200-validation (2^21-2^24, bases precomputed ×8), a
// simulated document writes each configuration's peak GPU memory and the
// factor behind it (and its setup, the sum of its parts): ×8 at 2^24, and ×4 at 2^26, as the backend loaded
// them there (docs/results/h200-gate/big26-0b3fb1b), where the MSMs'
// law, fitted at ×8, is said to price them at ×8. A law through the
// calibration's totals would put 2^26 at four times 2^24's 42 GiB, past
// the device's memory; the backend's halving keeps it well below.
func TestSimulatedGPUMemoryFollowsTheBackendsFactor(t *testing.T) {
	const dir = "../docs/results/h200-validation/"
	m, err := predict.Calibrate(t.Context(), []string{dir + "calibration/results.json.gz", dir + "interleaved21/results.json.gz",
		dir + "validation-big24-mid23/results.json.gz", dir + "validation-pileup22-ramp22/results.json.gz"}, predict.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.GPUMemory == nil || m.GPUMemory.Requested != shape.DefaultPrecomputeFactor {
		t.Fatalf("GPU memory law %+v: want one, requesting ×%d (the documents recorded no factor)", m.GPUMemory, shape.DefaultPrecomputeFactor)
	}
	specs, err := scenarios.LoadBytes("gpu.yaml", []byte(gpuMemoryScenario))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := predict.Document(context.Background(), specs, m, m.Environment, "test")
	if err != nil {
		t.Fatal(err)
	}
	peaks := map[string]float64{}
	for _, sc := range doc.Scenarios {
		r := sc.Repetitions[0]
		want := map[string]string{"at24": "8", "at26": "4"}[sc.Name]
		if got := r.ProverSettings["device0_precompute_factor"]; got != want {
			t.Errorf("%s: precompute factor %q, want %q", sc.Name, got, want)
		}
		if r.PeakGPUMemoryBytes == nil {
			t.Fatalf("%s: no peak GPU memory predicted", sc.Name)
		}
		peaks[sc.Name] = float64(*r.PeakGPUMemoryBytes)
		var sum float64
		for _, t := range r.SetupStages {
			sum += t
		}
		if r.SetupSeconds == nil || *r.SetupSeconds <= 0 || math.Abs(sum-*r.SetupSeconds) > 1e-9**r.SetupSeconds {
			t.Errorf("%s: setup %v, its parts %v: want a positive total, the sum of its parts", sc.Name, r.SetupSeconds, r.SetupStages)
		}
	}
	if !(peaks["at26"] < 3*peaks["at24"] && peaks["at26"] < m.GPUMemory.Device) {
		t.Errorf("peak GPU memory %.3g at 2^26, %.3g at 2^24: want under three times 2^24's and under the device's %.3g", peaks["at26"], peaks["at24"], m.GPUMemory.Device)
	}
	warnings := m.GPUMemoryWarnings(specs)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "at26 at 2^26") || !strings.Contains(warnings[0], "×4, not ×8") {
		t.Errorf("warnings %q: want one, that at26's bases are precomputed ×4, not ×8", warnings)
	}
}
