package predict

import (
	"fmt"

	"github.com/provebench/provebench/gpu/shape"
	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/sim"
)

// cudaPrecomputeSteps are the CUDA backend's setup steps of device 0 that
// precompute the full MSMs' bases (gpu/cuda's loadKey: the launch, then the
// wait for the device): the cuda package builds only with its tag, so the
// names are repeated here.
var cudaPrecomputeSteps = []string{"cuda.device0_precompute", "cuda.device0_sync"}

// SetupLaw is the time before a repetition's clock starts, part by part,
// each against what it moves: the backend's opening (and the key's
// mapping) against constraints; the key's way to the device per byte of
// the key, the bases' precomputation per precomputed byte (at the factor
// GPUMemoryLaw gives, so that a size where the backend halves it is
// priced at its own bytes), the page-locked pool per byte of it, a cached
// witness per byte of it, and on a warm clock one partition proved
// alone, from the stage laws. Fitted on the setup stages the calibration
// recorded (setup_stages); the rates are medians over its configurations.
type SetupLaw struct {
	Open              Linear  `json:"open"`
	KeyPerByte        float64 `json:"key_seconds_per_byte"`
	PrecomputePerByte float64 `json:"precompute_seconds_per_byte,omitempty"`
	PoolPerByte       float64 `json:"pool_seconds_per_byte,omitempty"`
	WitnessPerByte    float64 `json:"witness_seconds_per_byte,omitempty"`
	// WarmUp says the calibration's clock was warm: setup proves a
	// partition on every device before it.
	WarmUp bool `json:"warm_up,omitempty"`
}

// setupParts splits a configuration's recorded setup: opening, the key to
// the device less the precomputation, the precomputation.
func setupParts(st map[string]float64) (open, key, precompute float64) {
	for _, s := range cudaPrecomputeSteps {
		precompute += st[s]
	}
	return st[results.SetupKeyRead] + st[results.SetupBackendOpen], st[results.SetupKeyToDevice] - precompute, precompute
}

// fitSetup fits the law where the calibration recorded setup stages; nil
// otherwise (documents from before setup was timed by stage).
func (m *Model) fitSetup() *SetupLaw {
	var xs, open, key, pre, pool, witness []float64
	for _, p := range m.Points {
		if len(p.SetupStages) == 0 {
			continue
		}
		w := p.Spec.Workload
		c := w.Circuit()
		o, k, pc := setupParts(p.SetupStages)
		xs, open = append(xs, float64(w.Constraints)), append(open, o)
		key = append(key, k/float64(shape.KeyBytes(c)))
		if b := c.PrecomputedBytes(m.factorOf(p)); b > 0 && pc > 0 {
			pre = append(pre, pc/float64(b))
		}
		if t := p.SetupStages[results.SetupPinPool]; p.PoolBytes > 0 && t > 0 {
			pool = append(pool, t/p.PoolBytes)
		}
		if t := p.SetupStages[results.SetupWitnessCache]; t > 0 && witnessBytes(w) > 0 {
			witness = append(witness, t/witnessBytes(w))
		}
	}
	if len(xs) == 0 {
		return nil
	}
	return &SetupLaw{Open: fitLinear(xs, open), KeyPerByte: medianOr0(key), PrecomputePerByte: medianOr0(pre),
		PoolPerByte: medianOr0(pool), WitnessPerByte: medianOr0(witness), WarmUp: m.Measure == results.MeasureWarm}
}

func medianOr0(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return stats.Median(v)
}

// factorOf is the precompute factor a measured configuration ran at:
// recorded, else the GPU memory law's (predictedFactor).
func (m *Model) factorOf(p Point) int {
	if p.Precompute > 0 {
		return p.Precompute
	}
	return m.predictedFactor(p.Spec.Workload)
}

// Setup is the predicted setup of a simulated configuration, part by part
// (results.Setup* names; the opening under backend_open), and its total.
func (m *Model) Setup(o sim.Options, factor int) (map[string]float64, float64) {
	l := m.SetupLaw
	if l == nil {
		return nil, 0
	}
	w := o.Workload
	c := w.Circuit()
	parts := map[string]float64{
		results.SetupBackendOpen: max(l.Open.At(float64(w.Constraints)), 0),
		results.SetupKeyToDevice: l.KeyPerByte*float64(shape.KeyBytes(c)) + l.PrecomputePerByte*float64(c.PrecomputedBytes(factor)),
	}
	if o.Host.PooledBytes > 0 {
		parts[results.SetupPinPool] = l.PoolPerByte * float64(o.Host.PooledBytes)
	}
	if w.Cached() {
		parts[results.SetupWitnessCache] = l.WitnessPerByte * witnessBytes(w)
	}
	if l.WarmUp {
		st := o.Stages
		parts[results.SetupWarmPartition] = (st.Synthesis + st.Upload + st.GPUStart + st.Finalize).Seconds()
	}
	var total float64
	for _, t := range parts {
		total += t
	}
	return parts, total
}

// setupOf sets a simulated repetition's setup, where the model has a
// setup law.
func (m *Model) setupOf(r *results.Repetition, o sim.Options) {
	if m == nil {
		return
	}
	parts, total := m.Setup(o, m.predictedFactor(o.Workload))
	if parts == nil {
		return
	}
	r.SetupSeconds, r.SetupStages = &total, parts
}

// predictedFactor is the precompute factor a configuration loads with:
// the GPU memory law's, 1 without one.
func (m *Model) predictedFactor(w config.Workload) int {
	if m.GPUMemory == nil {
		return 1
	}
	return m.GPUMemory.Factor(w)
}

// String states the law.
func (l *SetupLaw) String() string {
	s := fmt.Sprintf("%.3g + %.3g × constraints (open) + %.3f s per GiB of key", l.Open.C, l.Open.D, l.KeyPerByte*(1<<30))
	if l.PrecomputePerByte > 0 {
		s += fmt.Sprintf(" + %.3f per GiB of precomputed bases", l.PrecomputePerByte*(1<<30))
	}
	if l.PoolPerByte > 0 {
		s += fmt.Sprintf(" + %.3f per GiB of pool", l.PoolPerByte*(1<<30))
	}
	if l.WitnessPerByte > 0 {
		s += fmt.Sprintf(" + %.3f per GiB of cached witness", l.WitnessPerByte*(1<<30))
	}
	if l.WarmUp {
		s += " + one partition alone (warm)"
	}
	return s
}
