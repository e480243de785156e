package pipeline

import (
	"slices"
	"time"

	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/internal/stats"
)

// Outcome is how a partition or a proof ended.
type Outcome string

// The outcomes.
const (
	// Done: proved (for a proof: every partition proved).
	Done Outcome = "done"
	// Failed: synthesis or the prover returned an error (for a proof: one
	// of its partitions failed).
	Failed Outcome = "failed"
	// Cancelled: abandoned because its proof failed or the run was
	// cancelled.
	Cancelled Outcome = "cancelled"
)

// The engine's own stage names, as Summarize reports them next to the
// backend's stages (prover.StageNTT, prover.StageMSMA, ...).
const (
	StageAdmission = "admission" // waiting at the strategy's gates
	StageSynthesis = "synthesis"
	StageQueueWait = "queue_wait" // synthesis end -> taken by a GPU worker
	StageGPUStart  = "gpu_start"  // Backend.Start
	StageFreeABC   = "free_abc"   // the early a/b/c free
	StageFinalize  = "finalize"   // Start returned -> Job.Wait returned
	StageDealloc   = "dealloc"    // freeing the dataset
)

// PartitionTiming is one admitted partition's path through the pipeline.
// A stage the partition never reached is 0. The stages leave gaps between
// them (hand-offs between goroutines, waiting for a finalizer), so their
// sum falls short of the partition's end: Ended records the real moment.
type PartitionTiming struct {
	Proof     int `json:"proof"`
	Partition int `json:"partition"`
	// Device is the device that ran Start, -1 if it never reached one.
	Device int `json:"device"`
	// Admitted is the offset from the run's start at which the partition
	// passed admission and began synthesis.
	Admitted time.Duration `json:"admitted"`
	// AdmissionWait is how long admission held it back (permit, budget,
	// pacer, synthesis slot), counted from when it became next in line.
	AdmissionWait time.Duration `json:"admission_wait"`
	Synthesis     time.Duration `json:"synthesis"`
	QueueWait     time.Duration `json:"queue_wait"`
	GPUStart      time.Duration `json:"gpu_start"`
	FreeABC       time.Duration `json:"free_abc"`
	Finalize      time.Duration `json:"finalize"`
	Dealloc       time.Duration `json:"dealloc"`
	// Ended is the offset from the run's start at which the partition's
	// dataset was freed (or it failed): its real end, stage gaps included.
	Ended time.Duration `json:"ended"`
	// Stages are the backend's own timings.
	Stages  []prover.Stage `json:"stages,omitempty"`
	Outcome Outcome        `json:"outcome"`
	// Err is why the partition failed or was cancelled.
	Err error `json:"-"`
	// Verified is set when Options.Verify ran: nil error means the proof
	// verified.
	Verified  bool  `json:"verified"`
	VerifyErr error `json:"-"`
}

// End is the offset from the run's start at which the partition ended:
// Ended, or for a timing recorded without it the sum of its stages (which
// leaves out the gaps between them).
func (p *PartitionTiming) End() time.Duration {
	if p.Ended > 0 {
		return p.Ended
	}
	return p.Admitted + p.Synthesis + p.QueueWait + p.GPUStart + p.FreeABC + p.Finalize + p.Dealloc
}

// ProofTiming is one started proof.
type ProofTiming struct {
	Proof int `json:"proof"`
	// Started and Ended are offsets from the run's start: when the proof
	// took its concurrency slot and when its last partition ended.
	Started time.Duration `json:"started"`
	Ended   time.Duration `json:"ended"`
	Outcome Outcome       `json:"outcome"`
	// Err is the first partition error of a failed proof, or the cause of
	// a cancelled one.
	Err error `json:"-"`
	// Verified counts the proof's partitions that verified;
	// VerifyFailed those that did not.
	Verified     int `json:"verified"`
	VerifyFailed int `json:"verify_failed"`
}

// Report is the outcome of one Run.
type Report struct {
	Backend  string   `json:"backend"`
	Devices  int      `json:"devices"`
	Workload Workload `json:"workload"`
	// Config is the configuration as run, defaults resolved.
	Config Config `json:"config"`

	// Wall is the time from the first admission to the last partition's
	// end; Elapsed is the whole of Run.
	Wall    time.Duration `json:"wall"`
	Elapsed time.Duration `json:"elapsed"`

	// Partition counts add up to Workload.Proofs * Workload.Partitions;
	// NotStarted partitions were never admitted (their proof failed first,
	// or the run was cancelled).
	PartitionsDone       int `json:"partitions_done"`
	PartitionsFailed     int `json:"partitions_failed"`
	PartitionsCancelled  int `json:"partitions_cancelled"`
	PartitionsNotStarted int `json:"partitions_not_started"`
	// Proof counts add up to Workload.Proofs.
	ProofsDone       int `json:"proofs_done"`
	ProofsFailed     int `json:"proofs_failed"`
	ProofsCancelled  int `json:"proofs_cancelled"`
	ProofsNotStarted int `json:"proofs_not_started"`
	// Verification (with Options.Verify): a proof is verified when all its
	// partitions verified, and failed verification when any did not.
	PartitionsVerified     int `json:"partitions_verified"`
	PartitionsVerifyFailed int `json:"partitions_verify_failed"`
	ProofsVerified         int `json:"proofs_verified"`
	ProofsVerifyFailed     int `json:"proofs_verify_failed"`

	// Partitions has one entry per admitted partition, in (proof,
	// partition) order; Proofs one per started proof.
	Partitions []PartitionTiming `json:"partitions"`
	Proofs     []ProofTiming     `json:"proofs"`
	// Pacer is the controller's trace, one sample per control period
	// (pacer strategy only).
	Pacer []PacerSample `json:"pacer,omitempty"`
}

// StageStats summarises one stage's durations.
type StageStats struct {
	Count int           `json:"count"`
	Total time.Duration `json:"total"`
	Mean  time.Duration `json:"mean"`
	P50   time.Duration `json:"p50"`
	P90   time.Duration `json:"p90"`
	Max   time.Duration `json:"max"`
}

// Summarize summarises stage durations by stage name over the partitions
// that were proved (Outcome Done): the engine's stages (StageSynthesis,
// StageQueueWait, ...) and the backend's own (prover.StageNTT, ...; a stage a
// backend reports several times for one partition counts each time). The
// early a/b/c free is included only when it ran. Failed and cancelled
// partitions are left out: their truncated stages would skew the figures.
func Summarize(partitions []PartitionTiming) map[string]StageStats {
	by := map[string][]time.Duration{}
	for i := range partitions {
		p := &partitions[i]
		if p.Outcome != Done {
			continue
		}
		by[StageAdmission] = append(by[StageAdmission], p.AdmissionWait)
		by[StageSynthesis] = append(by[StageSynthesis], p.Synthesis)
		by[StageQueueWait] = append(by[StageQueueWait], p.QueueWait)
		by[StageGPUStart] = append(by[StageGPUStart], p.GPUStart)
		if p.FreeABC > 0 {
			by[StageFreeABC] = append(by[StageFreeABC], p.FreeABC)
		}
		by[StageFinalize] = append(by[StageFinalize], p.Finalize)
		by[StageDealloc] = append(by[StageDealloc], p.Dealloc)
		for _, s := range p.Stages {
			by[s.Name] = append(by[s.Name], s.Duration)
		}
	}
	out := make(map[string]StageStats, len(by))
	for name, ds := range by {
		out[name] = SummarizeDurations(ds)
	}
	return out
}

// SummarizeDurations computes count, total, mean, the nearest-rank 50th and
// 90th percentiles and the maximum of ds (which it sorts in place).
func SummarizeDurations(ds []time.Duration) StageStats {
	if len(ds) == 0 {
		return StageStats{}
	}
	slices.Sort(ds)
	var total time.Duration
	for _, d := range ds {
		total += d
	}
	return StageStats{
		Count: len(ds),
		Total: total,
		Mean:  total / time.Duration(len(ds)),
		P50:   stats.Percentile(ds, 50),
		P90:   stats.Percentile(ds, 90),
		Max:   ds[len(ds)-1],
	}
}
