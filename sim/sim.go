package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/sim/model"
)

// Options is one configuration to simulate.
type Options struct {
	Workload config.Workload
	// Config is resolved here; a zero SynthesisWorkers without a permit
	// gate means the host's cores (else 1 per permit, as in the engine).
	Config config.Config
	Stages Stages
	Host   Host
	// Timeline records the RSS and counters after every event (for
	// plots); a search leaves it off.
	Timeline bool

	// admitFirst orders two things that happen at the same instant the
	// other way: a partition that ends synthesis frees its synthesis slot
	// (and a release permit), is sent (returning a hold permit) and, if a
	// GPU worker is idle, is taken at once; the dispatcher may admit the
	// next one before or after the take. In the engine two goroutines race
	// there; by default the simulator takes first.
	admitFirst bool
	// synthesisOf, when set, gives each partition's synthesis time (the
	// engine comparison staggers them so that no two end at once).
	synthesisOf func(proof, partition int) time.Duration
}

// Point is the state after one event.
type Point struct {
	T        time.Duration `json:"t"`
	RSS      int64         `json:"rss"`
	Counters []int64       `json:"counters"` // parallel to pipeline.Tracker.Names
}

// OOM is the moment a configuration ran out of the host's memory.
type OOM struct {
	At       time.Duration    `json:"at"`
	RSS      int64            `json:"rss"`
	Counters map[string]int64 `json:"counters"`
}

// Result is one simulated run.
type Result struct {
	Report  *pipeline.Report
	Tracker *pipeline.Tracker
	// PeakRSS is the predicted peak: Baseline + live dataset bytes + what
	// the synthesizing partitions hold.
	PeakRSS int64
	// DeviceBusy is the devices' compute time (NTT regions and MSMs) over
	// the wall time, averaged over the devices.
	DeviceBusy float64
	// DeviceStalled is the time the devices were held up by Stages.PinStall,
	// all devices.
	DeviceStalled time.Duration
	Timeline      []Point
	// OOM is set when the predicted RSS passed Host.Memory; the run
	// stops there.
	OOM *OOM
}

// Throughput is proofs per second over the wall time (0 when none ended).
func (r *Result) Throughput() float64 {
	if r.Report.Wall <= 0 {
		return 0
	}
	return float64(r.Report.ProofsDone) / r.Report.Wall.Seconds()
}

// ResolveConfig is c as the runner resolves it on a host of the given
// cores (0: unknown, the runner's own): a strategy without permits
// synthesizes on every core.
func ResolveConfig(c config.Config, cores int) config.Config {
	if c.SynthesisWorkers == 0 && !c.Strategy.UsesPermits() && cores > 0 {
		c.SynthesisWorkers = cores
	}
	return c.Resolved()
}

// Run simulates o to the end of its batch, or to the moment it runs out
// of memory.
func Run(o Options) (*Result, error) {
	o.Config = ResolveConfig(o.Config, o.Host.Cores)
	if err := errors.Join(o.Workload.Validate(), o.Config.ValidateFor(o.Stages.ABCBytes, o.Stages.WireBytes),
		o.Stages.Validate(), o.Host.Validate()); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	s := newSim(o)
	if err := s.run(); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	return s.result(), nil
}

type jobKind int

const (
	synthDone jobKind = iota
	uploadDone
	startDone
	finalizeDone
	stallDone
	nttDone        // SubmitQueue: the NTT region ran; the MSMs follow on the device
	streamCopyDone // the part of an upload beyond the pool ran in the device's stream
	tick
	retry
)

type event struct {
	at   time.Duration
	seq  int64
	kind jobKind
	it   *item
	gen  int
}

type events []*event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *events) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// item is one admitted partition.
type item struct {
	proof, part int
	tk          pipeline.Ticket
	t           *pipeline.PartitionTiming
	work        time.Duration // synthesis left, at full speed
	gen         int           // invalidates a rescheduled synthDone
	synthEnd    time.Duration
	dev         int
	abc, wires  int64
	// pooled is the part of the dataset in Host.PooledBytes's pool, given
	// when its synthesis starts (the pool's first come, first served);
	// the rest is in ordinary memory.
	pooled int64
	// onStream is the part of its upload, from ordinary memory, still to
	// run on the device's stream (see Stages.PageableUpload).
	onStream time.Duration
}

// devJob is a Start or Finalize waiting for a serial device.
type devJob struct {
	it   *item
	kind jobKind
	d    time.Duration
}

// The simulator's model of a partition's stages and of the host is
// sim/model's, which spec records without linking the engine; these names
// let the simulator read as it did.
type (
	Stages = model.Stages
	Host   = model.Host
)
