package predict

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/spec"
)

// InSample is a model's error on the runs it was fitted to: the least a
// prediction of another configuration can be off by, printed beside every
// prediction so that none reads as exact.
type InSample struct {
	// Configurations is how many calibration configurations were
	// predicted again.
	Configurations int
	// SecondsPerProof and PeakRSS are the spread of the signed errors,
	// (predicted - measured) / measured, over them; PartitionsPerSecond
	// that of the rate the times imply (measured / predicted s/proof - 1).
	SecondsPerProof, PartitionsPerSecond, PeakRSS ErrorSpread
}

// ErrorSpread is the signed range of relative errors and the 90th
// percentile of their magnitudes.
type ErrorSpread struct {
	Min, Max, P90 float64
}

// InSample predicts every calibration configuration again and summarises
// the errors.
func (m *Model) InSample(hostMemory int64) (InSample, error) {
	checks, err := m.Checks(hostMemory)
	if err != nil {
		return InSample{}, err
	}
	return Summarise(checks), nil
}

// Summarise is the spread of the errors of checks (InSample of the
// calibration's own, or of runs not calibrated on: --check).
func Summarise(checks []Check) InSample {
	var spp, rate, rss []float64
	for _, c := range checks {
		if p := c.Point.SecondsPerProof; p > 0 && c.SecondsPerProof > 0 {
			spp, rate = append(spp, c.SecondsPerProof/p-1), append(rate, p/c.SecondsPerProof-1)
		}
		if p := c.Point.PeakRSS; p > 0 && c.PeakRSS > 0 {
			rss = append(rss, c.PeakRSS/p-1)
		}
	}
	return InSample{Configurations: len(checks), SecondsPerProof: spreadOf(spp), PartitionsPerSecond: spreadOf(rate), PeakRSS: spreadOf(rss)}
}

func spreadOf(errs []float64) ErrorSpread {
	if len(errs) == 0 {
		return ErrorSpread{Min: math.NaN(), Max: math.NaN(), P90: math.NaN()}
	}
	s := ErrorSpread{Min: errs[0], Max: errs[0]}
	abs := make([]float64, len(errs))
	for i, e := range errs {
		s.Min, s.Max, abs[i] = min(s.Min, e), max(s.Max, e), math.Abs(e)
	}
	s.P90 = stats.Percentile(abs, 90)
	return s
}

// Range is the signed range as "-4.9%..+8.2%" ("-" when none).
func (s ErrorSpread) Range() string {
	if math.IsNaN(s.Min) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%..%+.1f%%", 100*s.Min, 100*s.Max)
}

func (s InSample) String() string {
	return s.Line("in-sample error over the calibration configurations")
}

// Line is the summary headed by what the errors are of.
func (s InSample) Line(what string) string {
	return fmt.Sprintf("%s (%d): s/proof %s, partitions/s %s (|error| p90 %.1f%%), peak RSS %s (|error| p90 %.1f%%)",
		what, s.Configurations, s.SecondsPerProof.Range(), s.PartitionsPerSecond.Range(), 100*s.PartitionsPerSecond.P90, s.PeakRSS.Range(), 100*s.PeakRSS.P90)
}

// unevenLoad is how far apart, as a share of the host's CPU, the others'
// use may be between the calibration's configurations before their stage
// times are said to mix host speeds: the same tenth of the machine that
// makes a host no longer quiet (results.QuietOthers).
const unevenLoad = results.QuietOthers

// Warnings say when the calibration's runs make its stage costs the
// host's rather than the prover's: several configurations run one after
// another (not interleaved), neighbours or the hypervisor taking a large
// share of the CPU, or taking very different shares from one
// configuration to the next.
func (m *Model) Warnings() []string {
	var out []string
	for _, f := range m.Sequential {
		out = append(out, fmt.Sprintf("calibration %s ran its configurations one after another, not interleaved (run --interleave): a drift in the host's speed fell on some of them only, and the fitted costs carry it", f))
	}
	var high []string
	lo, hi := math.Inf(1), math.Inf(-1)
	var loName, hiName string
	for _, p := range m.Points {
		l := p.Load
		if l == nil {
			continue
		}
		if l.Others > results.QuietOthers || l.Steal > 0.05 {
			high = append(high, fmt.Sprintf("%s %s", p.Scenario, l))
		}
		if l.Others < 0 {
			continue
		}
		if l.Others < lo {
			lo, loName = l.Others, p.Scenario
		}
		if l.Others > hi {
			hi, hiName = l.Others, p.Scenario
		}
	}
	if len(high) > 0 {
		effect := "their stage times include the neighbours' slowing, so predictions hold for a host as busy"
		if m.HostProver {
			effect = "the prover shares those cores, so its stage times were taken back to a quiet host by the share of the CPU left to each run, an estimate that grows less sure the smaller that share; predictions are for a quiet host (a check prices the load its run recorded)"
		}
		out = append(out, fmt.Sprintf("calibration ran under high host load in %d of %d configurations (%s): %s; calibrate on a quiet host",
			len(high), len(m.Points), abbreviate(high), effect))
	}
	if hi-lo > unevenLoad {
		out = append(out, fmt.Sprintf("host load uneven across the calibration: other processes used %.0f%% of the CPU during %s and %.0f%% during %s: the fitted costs mix two host speeds",
			100*lo, loName, 100*hi, hiName))
	}
	return out
}

func (l *PointLoad) String() string {
	var parts []string
	if l.Others >= 0 {
		parts = append(parts, fmt.Sprintf("others %.0f%% of the CPU", 100*l.Others))
	}
	if l.Steal > 0.05 {
		parts = append(parts, fmt.Sprintf("steal %.0f%%", 100*l.Steal))
	}
	parts = append(parts, fmt.Sprintf("load %.1f", l.Load1))
	return "(" + strings.Join(parts, ", ") + ")"
}

// Beyond says which configurations lie more than one doubling of the
// constraints past the largest size the calibration measured: there every
// stage's law extrapolates, and a cost that grows faster past the
// calibrated sizes than within them is not in it. A prediction there gets
// this warning beside it, not silence.
func (m *Model) Beyond(specs []spec.Spec) []string {
	largest := 0
	for _, p := range m.Points {
		largest = max(largest, p.Spec.Workload.Constraints)
	}
	bySize := map[int][]string{}
	for _, s := range specs {
		if c := s.Workload.Constraints; largest > 0 && c > 2*largest {
			bySize[c] = append(bySize[c], s.Name)
		}
	}
	var out []string
	for _, c := range slices.Sorted(maps.Keys(bySize)) {
		out = append(out, fmt.Sprintf("%s at %s constraints: %d doublings past the calibration's largest size (%s); the stage laws extrapolate there, and a stage that grows faster past the calibrated sizes (the NTT region on an H200, docs/simulate.md, \"Limits\") is predicted short: calibrate at or near the size predicted",
			abbreviate(bySize[c]), pow2(c), bits.Len(uint(c))-bits.Len(uint(largest)), pow2(largest)))
	}
	return out
}
