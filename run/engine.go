package run

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/run/events"
)

// EngineReport is what `provebench engine` prints when its run ends.
type EngineReport struct {
	Name        string  `json:"name"`
	Backend     string  `json:"backend"`
	WallSeconds float64 `json:"wall_seconds"`
	// SetupSeconds is the prover's setup before the run (key, device,
	// warm-up), by stage in SetupStages: not in WallSeconds.
	SetupSeconds     float64            `json:"setup_seconds"`
	SetupStages      map[string]float64 `json:"setup_stages,omitempty"`
	PartitionsDone   int                `json:"partitions_done"`
	PartitionsFailed int                `json:"partitions_failed"`
	ProofsDone       int                `json:"proofs_done"`
	PeakCounters     map[string]int64   `json:"peak_counters"`
}

// RunEngine runs one configuration's pipeline in this process, as a prover
// daemon would, for provebench to measure as an external prover (the exec
// driver). With timeline set it prints cuzk's TIMELINE lines there, one per
// pipeline.TimelineEvent: SYNTH_START and SYNTH_END around synthesis, GPU_QUEUE when
// the channel accepts the partition, GPU_PICKUP when a GPU worker takes it,
// GPU_START and GPU_END around the backend's Start (provebench's GPU region:
// the NTT and the MSMs' launch, the engine's on_gpu counter). The job id is
// the proof, the detail the partition.
func RunEngine(ctx context.Context, spec *Spec, cacheDir string, timeline io.Writer) (*EngineReport, error) {
	var opts pipeline.Options
	var tw *timelineWriter
	if timeline != nil {
		tw = &timelineWriter{w: timeline}
		opts.Observe = tw.event
	}
	// A daemon is warm before work arrives (spec.Measure): the TIMELINE's
	// clock, like a repetition's, starts once the prover is ready.
	pr, err := prepareProver(ctx, spec, cacheDir, opts)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	defer pr.Close()
	if tw != nil {
		tw.start = time.Now()
	}
	report, err := pr.engine.Run(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: pipeline: %w", err)
	}
	var snap pipeline.Snapshot
	pr.engine.Tracker().Snapshot(&snap)
	peaks := make(map[string]int64)
	for i, name := range pr.engine.Tracker().Names() {
		peaks[name] = snap.Peaks[i]
	}
	return &EngineReport{
		Name: spec.Name, Backend: pr.be.Name(), WallSeconds: report.Wall.Seconds(),
		SetupSeconds: pr.setup.Seconds(), SetupStages: pr.setupSeconds(),
		PartitionsDone: report.PartitionsDone, PartitionsFailed: report.PartitionsFailed,
		ProofsDone: report.ProofsDone, PeakCounters: peaks,
	}, nil
}

// timelineWriter prints TIMELINE lines, one write per line so that lines
// from many goroutines never interleave.
type timelineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (t *timelineWriter) event(ev pipeline.TimelineEvent, proof, partition int) {
	line := events.FormatTimeline(time.Since(t.start), string(ev), strconv.Itoa(proof), strconv.Itoa(partition)) + "\n"
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = io.WriteString(t.w, line)
}
