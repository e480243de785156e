package predict

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"math/bits"
	"slices"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/sim"
)

// Check is the model's prediction of one calibration configuration beside
// what was measured.
type Check struct {
	Point               Point
	Synthesis, GPUStart float64 // predicted seconds per partition
	Finalize, Upload    float64
	SecondsPerProof     float64
	PeakRSS             float64
	// PeakGPU is the devices' predicted peak memory, 0 where the model
	// has no GPU memory law; Setup the time before the clock, 0 where it
	// has no setup law.
	PeakGPU, Setup float64
	OOM            bool
}

// Checks simulates every calibration configuration with the model: the
// error of the model on the runs it was fitted to.
func (m *Model) Checks(hostMemory int64) ([]Check, error) { return m.check(m.Points, hostMemory) }

// CheckDocument predicts every measured configuration of a results
// document (one not used for calibration, to validate the model), which
// Load accepts; notes say what it left out.
func (m *Model) CheckDocument(ctx context.Context, file string, hostMemory int64) ([]Check, []string, error) {
	ms, err := Load(ctx, []string{file}, LoadOptions{Role: "--check"})
	if err != nil {
		return nil, nil, err
	}
	checks, err := m.check(ms.Points, hostMemory)
	return checks, ms.Notes, err
}

func (m *Model) check(points []Point, hostMemory int64) ([]Check, error) {
	var out []Check
	for _, p := range points {
		c, err := m.predict(p, hostMemory)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// predict simulates one measured configuration with the model.
func (m *Model) predict(p Point, hostMemory int64) (Check, error) {
	share := 1.0
	if m.HostProver {
		share = p.share() // the host as busy as it was
	}
	o, err := options(&p.Spec, p.SynthesisMode, m, hostMemory, share)
	if err != nil {
		return Check{}, err
	}
	res, err := sim.Run(o)
	if err != nil {
		return Check{}, fmt.Errorf("%s: %w", p.Scenario, err)
	}
	c := Check{Point: p, PeakRSS: float64(res.PeakRSS), OOM: res.OOM != nil}
	n := float64(p.Spec.Workload.Constraints)
	// The synthesis the simulation played, sharing included.
	for _, t := range res.Report.Partitions {
		c.Synthesis += t.Synthesis.Seconds() / float64(len(res.Report.Partitions))
	}
	c.GPUStart, c.Finalize, c.Upload = m.GPUStart.At(n)/share, m.Finalize.At(n)/share, m.Upload.At(n)
	// A run that recorded its precompute factor is predicted at it: it
	// may have asked for another than the calibration's.
	factor := m.factorOf(p)
	if law := m.GPUMemory; law != nil {
		c.PeakGPU = law.PeakAt(p.Spec.Workload, factor)
	}
	_, c.Setup = m.Setup(o, factor)
	if res.Report.ProofsDone > 0 {
		c.SecondsPerProof = res.Report.Wall.Seconds() / float64(res.Report.ProofsDone)
	}
	return c, nil
}

// PrintChecks writes predictions beside measurements as a Markdown table.
func PrintChecks(w io.Writer, checks []Check) {
	gpu := slices.ContainsFunc(checks, func(c Check) bool { return c.PeakGPU > 0 })
	setup := slices.ContainsFunc(checks, func(c Check) bool { return c.Setup > 0 })
	head, rule := "", ""
	if gpu {
		head, rule = head+" peak GPU memory (err) |", rule+"---|"
	}
	if setup {
		head, rule = head+" setup s (err) |", rule+"---|"
	}
	fmt.Fprintln(w, "| configuration | size | reps | synthesis s (err) | NTT s (err) | MSMs s (err) | s/proof predicted | s/proof measured | err | partitions/s err | peak RSS predicted | measured | err |"+head)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|"+rule)
	for _, c := range checks {
		p := c.Point
		fmt.Fprintf(w, "| %s | 2^%d | %d | %.3f (%s) | %.3f (%s) | %.3f (%s) | %.3f | %.3f | %s | %s | %s | %s | %s |", p.Scenario,
			bits.Len(uint(p.Spec.Workload.Constraints))-1, p.Reps, c.Synthesis, relErr(c.Synthesis, p.Synthesis),
			c.GPUStart, relErr(c.GPUStart, p.GPUStart), c.Finalize, relErr(c.Finalize, p.Finalize),
			c.SecondsPerProof, p.SecondsPerProof, relErr(c.SecondsPerProof, p.SecondsPerProof), rateErr(c.SecondsPerProof, p.SecondsPerProof),
			units.FormatBytes(int64(c.PeakRSS)), units.FormatBytes(int64(p.PeakRSS)), relErr(c.PeakRSS, p.PeakRSS))
		if gpu {
			fmt.Fprintf(w, " %s (%s) |", units.FormatBytes(int64(c.PeakGPU)), relErr(c.PeakGPU, p.PeakGPU))
		}
		if setup {
			fmt.Fprintf(w, " %.1f (%s) |", c.Setup, relErr(c.Setup, p.Setup))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\n(predicted, and its error against the median of the measured repetitions)")
	printStageErrors(w, checks)
}

// Explain prints the fitted model and its error on the calibration runs.
func (m *Model) Explain(w io.Writer, hostMemory int64) error {
	fmt.Fprintf(w, "calibration: %s from %v\n", units.Plural(len(m.Points), "configuration"), m.Calibration)
	if m.Measure != "" {
		fmt.Fprintf(w, "clock: %s\n", measureName(m.Measure))
	}
	fmt.Fprintf(w, "host: %s, %d cores, %d devices, backend %s\n\n", m.Host, m.Cores, m.Devices, m.Backend)
	for _, mode := range slices.Sorted(maps.Keys(m.Synthesis)) {
		law := m.Synthesis[mode]
		x := "constraints × (rounds+1)"
		if mode == config.SynthesisCached {
			x = "constraints (the copy of a cached witness)"
		}
		if law.Witness != nil && law.Round != nil && mode != config.SynthesisCached {
			fmt.Fprintf(w, "synthesis, %s (one partition alone, s) = witness + rounds × round   x = constraints\n", mode)
			fmt.Fprintf(w, "  witness = %v   round = %v\n", *law.Witness, *law.Round)
		} else {
			fmt.Fprintf(w, "synthesis, %s (one partition alone, s) = %v   x = %s\n", mode, law.Alone, x)
		}
		if law.ContentionExponent != 0 {
			fmt.Fprintf(w, "  k at once each take 1 + c·(k-1) times as long (contention), c = %.2f · (x/%s)^%g, and share the %d cores\n",
				law.Contention, pow2(law.ContentionSize), law.ContentionExponent, m.Cores)
		} else {
			fmt.Fprintf(w, "  k at once each take 1 + %.2f·(k-1) times as long (contention), and share the %d cores\n", law.Contention, m.Cores)
		}
		if law.Spread > 0 {
			fmt.Fprintf(w, "  a partition's time spread ±%.0f%% (uniform; measured where the sharing held steady)\n", 100*law.Spread)
		}
	}
	fmt.Fprintf(w, "NTT region, gpu_start (s)           = %v   x = constraints\n", m.GPUStart)
	fmt.Fprintf(w, "upload (s)                          = %v   x = constraints\n", m.Upload)
	if m.PageableUpload > 0 {
		fmt.Fprintf(w, "pageable upload (s per GiB)         = %.3f   (%.1f GB/s: a dataset beyond the pool, in the device's stream)\n", m.PageableUpload*(1<<30), 1e-9/m.PageableUpload)
	}
	if m.Pooled {
		fmt.Fprintln(w, "page-locked pool                    = config.WarmPoolDatasets datasets, reserved before the clock (its datasets add no RSS)")
	}
	fmt.Fprintf(w, "MSMs + assembly, finalize (s)       = %v   x = constraints\n", m.Finalize)
	if m.PinStall > 0 {
		fmt.Fprintf(w, "start stall (s per GiB of dataset)  = %.3f\n", m.PinStall*(1<<30))
		fmt.Fprintln(w, "  (a partition starting synthesis holds a busy device up this long: on the CUDA backend,")
		fmt.Fprintln(w, "   page-locking its dataset; on the CPU backend, taking cores from the prover)")
	}
	if m.DeviceReady.A > 0 {
		fmt.Fprintf(w, "device ready (s from the start)     = %v   x = constraints\n", m.DeviceReady)
		fmt.Fprintln(w, "  (the backend's first-use stall: no Start completes before it)")
	}
	fmt.Fprintln(w, "  (device time of the NTT region and of the MSMs + assembly, one at a time per device;")
	fmt.Fprintln(w, "   the upload holds the GPU worker and overlaps the device's compute)")
	fmt.Fprintf(w, "baseline RSS (bytes)                = %.4g + %.4g × constraints\n", m.Baseline.C, m.Baseline.D)
	fmt.Fprintf(w, "working memory at the peak (bytes)  = %.4g + %.4g × constraints\n", m.Working.C, m.Working.D)
	if m.GPUMemory != nil {
		fmt.Fprintf(w, "peak GPU memory (bytes)             = %v\n", m.GPUMemory)
		fmt.Fprintf(w, "  (the key and the bases counted from the circuit's shape; the calibration's runs: %s)\n", m.factorsBySize())
	}
	if m.SetupLaw != nil {
		fmt.Fprintf(w, "setup, before the clock (s)         = %v\n", m.SetupLaw)
	}
	fmt.Fprintln(w)

	checks, err := m.Checks(hostMemory)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "error on the calibration runs themselves:")
	fmt.Fprintln(w)
	PrintChecks(w, checks)
	in, err := m.InSample(hostMemory)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n", in)
	for _, warning := range m.Warnings() {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
	return nil
}

// rateErr is the error of the rate a time implies (partitions/s against
// s/proof): measured / predicted - 1, as a signed percentage.
func rateErr(pred, meas float64) string {
	if pred <= 0 {
		return "-"
	}
	return relErr(meas, pred)
}

// relErr is (predicted - measured) / measured as a signed percentage.
func relErr(pred, meas float64) string {
	if meas == 0 || math.IsNaN(meas) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(pred-meas)/meas)
}
