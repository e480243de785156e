package predict

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/provebench/provebench/gpu/shape"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/spec"
)

// precomputeSetting is the prover setting in which the CUDA backend
// records the precompute factor device 0 loaded the key with
// (prover.Describer).
const precomputeSetting = "device0_precompute_factor"

// GPUMemoryLaw is a device's peak memory against the size, in three
// parts. Two are counted from the circuit's shape, not fitted: the
// proving key, resident on the device (shape.KeyBytes), and the full
// MSMs' precomputed bases (shape's PrecomputedBytes), whose factor the
// backend lowers at load where the device lacks the memory
// (shape.PrecomputeFactor). The rest (the partitions' buffers on the
// device, the NTT domain, the MSMs' scratch, the context) is fitted
// against constraints on what the calibration measured beyond the two. A
// law through the calibration's totals alone would carry the factor of
// its sizes to sizes where the backend halves it: on the H200 it keeps 8
// up to 2^25 and loads 2^26 at 4 (docs/gpu.md).
type GPUMemoryLaw struct {
	// Device is the memory of the calibration host's first device.
	Device float64 `json:"device_bytes"`
	// Requested is the precompute factor the calibration's runs asked
	// for: the largest any of them recorded, else (documents from before
	// the backend recorded it) shape.DefaultPrecomputeFactor.
	Requested int `json:"requested_precompute_factor"`
	// Rest is the peak beyond the key and the precomputed bases.
	Rest Linear `json:"rest"`
}

// Factor is the precompute factor the backend would load w's key with on
// the calibration's device: the requested factor, halved while the bases
// would take more than half the memory left free by the key and the
// rest's fixed part (the context; the domain is left out, a few per cent
// of the free memory at most).
func (l *GPUMemoryLaw) Factor(w config.Workload) int {
	p := w.Circuit()
	free := l.Device - float64(shape.KeyBytes(p)) - max(l.Rest.C, 0)
	return shape.PrecomputeFactor(p, l.Requested, uint64(max(free, 0)))
}

// Peak is the predicted peak of the device's memory for w.
func (l *GPUMemoryLaw) Peak(w config.Workload) float64 { return l.PeakAt(w, l.Factor(w)) }

// PeakAt is the predicted peak of the device's memory for w with the
// bases precomputed at factor: a run that asked for another factor than
// the calibration's ($PROVEBENCH_MSM_PRECOMPUTE) and recorded it.
func (l *GPUMemoryLaw) PeakAt(w config.Workload, factor int) float64 {
	p := w.Circuit()
	return float64(shape.KeyBytes(p)+p.PrecomputedBytes(factor)) + l.Rest.At(float64(w.Constraints))
}

// String states the law.
func (l *GPUMemoryLaw) String() string {
	return fmt.Sprintf("key + precomputed bases + %.4g + %.4g × constraints   (bases ×%d requested, halved while over half the free memory of the %s device)",
		l.Rest.C, l.Rest.D, l.Requested, units.FormatBytes(int64(l.Device)))
}

// recordedFactor is the precompute factor a repetition recorded, 0 when it
// recorded none.
func recordedFactor(r *results.Repetition) int {
	f, err := strconv.Atoi(r.ProverSettings[precomputeSetting])
	if err != nil {
		return 0
	}
	return f
}

// fitGPUMemory fits the law where the calibration ran on a device and
// measured its memory; nil otherwise (a host prover, no NVML, no device
// memory recorded).
func (m *Model) fitGPUMemory() *GPUMemoryLaw {
	if m.HostProver || len(m.Environment.GPUs) == 0 || m.Environment.GPUs[0].MemoryBytes == 0 {
		return nil
	}
	law := &GPUMemoryLaw{Device: float64(m.Environment.GPUs[0].MemoryBytes), Requested: shape.DefaultPrecomputeFactor}
	recorded := 0
	for _, p := range m.Points {
		recorded = max(recorded, p.Precompute)
	}
	if recorded > 0 {
		law.Requested = recorded
	}
	var xs, ys []float64
	for _, p := range m.Points {
		if p.PeakGPU <= 0 {
			continue
		}
		w := p.Spec.Workload
		factor := p.Precompute
		if factor == 0 {
			factor = law.Factor(w) // the rest's fixed part is still 0 here
		}
		c := w.Circuit()
		xs = append(xs, float64(w.Constraints))
		ys = append(ys, p.PeakGPU-float64(shape.KeyBytes(c)+c.PrecomputedBytes(factor)))
	}
	if len(xs) == 0 {
		return nil
	}
	law.Rest = fitLinear(xs, ys)
	return law
}

// GPUMemoryWarnings say, for the configurations predicted, where the
// backend would load the bases at another precompute factor than the
// calibration's largest size ran at (the MSMs' law was fitted there, so
// it prices them at the calibration's factor, and fewer precomputed bases
// make the MSMs slower), and where the predicted peak passes the device's
// memory.
func (m *Model) GPUMemoryWarnings(specs []spec.Spec) []string {
	law := m.GPUMemory
	if law == nil {
		return nil
	}
	largest := 0
	for _, p := range m.Points {
		largest = max(largest, p.Spec.Workload.Constraints)
	}
	calibrated := law.Factor(config.Workload{Constraints: largest})
	// By size, the first configuration's workload stands for the others
	// named with it.
	factorAt, over := map[int][]string{}, map[int][]string{}
	first := map[int]config.Workload{}
	for _, s := range specs {
		w := s.Workload
		if _, ok := first[w.Constraints]; !ok {
			first[w.Constraints] = w
		}
		if law.Factor(w) != calibrated {
			factorAt[w.Constraints] = append(factorAt[w.Constraints], s.Name)
		}
		if law.Peak(w) > law.Device {
			over[w.Constraints] = append(over[w.Constraints], s.Name)
		}
	}
	var out []string
	for _, c := range slices.Sorted(maps.Keys(factorAt)) {
		out = append(out, fmt.Sprintf("%s at %s constraints: the backend would precompute the MSMs' bases ×%d, not ×%d as at the calibration's %s; the MSMs' law is fitted at ×%d and prices them so (fewer precomputed bases make them slower: docs/gpu.md)",
			abbreviate(factorAt[c]), pow2(c), law.Factor(first[c]), calibrated, pow2(largest), calibrated))
	}
	for _, c := range slices.Sorted(maps.Keys(over)) {
		out = append(out, fmt.Sprintf("%s at %s constraints: predicted peak GPU memory %s passes the device's %s",
			abbreviate(over[c]), pow2(c), units.FormatBytes(int64(law.Peak(first[c]))), units.FormatBytes(int64(law.Device))))
	}
	return out
}

// gpuMemoryOf sets a simulated repetition's peak GPU memory and the
// precompute factor behind it, where the model has a GPU memory law.
func (m *Model) gpuMemoryOf(r *results.Repetition, w config.Workload) {
	if m == nil || m.GPUMemory == nil {
		return
	}
	peak := uint64(max(m.GPUMemory.Peak(w), 0))
	r.PeakGPUMemoryBytes = &peak
	r.ProverSettings = map[string]string{precomputeSetting: strconv.Itoa(m.GPUMemory.Factor(w))}
}

// factorsBySize lists the precompute factor the calibration's runs
// loaded at each size (recorded, else the law's), for --explain.
func (m *Model) factorsBySize() string {
	bySize := map[int]int{}
	for _, p := range m.Points {
		bySize[p.Spec.Workload.Constraints] = m.factorOf(p)
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(bySize)) {
		parts = append(parts, fmt.Sprintf("×%d at %s", bySize[c], pow2(c)))
	}
	return strings.Join(parts, ", ")
}
