package predict

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/provebench/provebench/internal/stats"
)

// The stages StageErrors judges besides synthesis ("synthesis " and the
// mode).
const (
	StageUpload    = "upload"
	StageNTT       = "NTT region"
	StageMSMs      = "MSMs"
	StageGPUMemory = "peak GPU memory"
	StageSetup     = "setup"
)

// StageError is one stage's error over a set of checks: the median of
// (predicted − measured) / measured over the configurations that measured
// the stage, and the largest |error|.
type StageError struct {
	Stage      string
	Median     float64
	Largest    float64
	Configured int // how many configurations measured it
}

// StageErrors is each stage's error over checks, in the order a partition
// meets them: synthesis per mode, the upload, the NTT region, the MSMs,
// then the device's peak memory and the setup, each where the model
// predicts it and the runs measured it. The device stages are judged on
// the device's own clock where the runs recorded it.
func StageErrors(checks []Check) []StageError {
	errs := map[string][]float64{}
	var order []string
	add := func(stage string, pred, meas float64) {
		if meas <= 0 || pred <= 0 || math.IsNaN(meas) {
			return
		}
		if _, ok := errs[stage]; !ok {
			order = append(order, stage)
		}
		errs[stage] = append(errs[stage], pred/meas-1)
	}
	for _, mode := range []string{"", StageUpload, StageNTT, StageMSMs, StageGPUMemory, StageSetup} {
		for _, c := range checks {
			p := c.Point
			switch mode {
			case "":
				add("synthesis "+p.SynthesisMode, c.Synthesis, p.Synthesis)
			case StageUpload:
				if p.PageableBytes == 0 {
					add(mode, c.Upload, p.Upload)
				}
			case StageNTT:
				add(mode, c.GPUStart, deviceOrEngine(p.DeviceGPUStart, p.GPUStart))
			case StageMSMs:
				add(mode, c.Finalize, deviceOrEngine(p.DeviceFinalize, p.Finalize))
			case StageGPUMemory:
				add(mode, c.PeakGPU, p.PeakGPU)
			case StageSetup:
				add(mode, c.Setup, p.Setup)
			}
		}
	}
	out := make([]StageError, 0, len(order))
	for _, stage := range order {
		e := StageError{Stage: stage, Median: stats.Median(errs[stage]), Configured: len(errs[stage])}
		for _, v := range errs[stage] {
			e.Largest = max(e.Largest, math.Abs(v))
		}
		out = append(out, e)
	}
	return out
}

// deviceOrEngine is the device's own time where the runs recorded it,
// else the engine's stage time.
func deviceOrEngine(device, engine float64) float64 {
	if device > 0 {
		return device
	}
	return engine
}

// printStageErrors writes each stage's error on one line.
func printStageErrors(w io.Writer, checks []Check) {
	var parts []string
	for _, e := range StageErrors(checks) {
		parts = append(parts, fmt.Sprintf("%s %+.1f%% (largest %.1f%%, %d)", e.Stage, 100*e.Median, 100*e.Largest, e.Configured))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "each stage's error, the median over the configurations (the largest |error|, how many): %s\n", strings.Join(parts, "; "))
	}
}
