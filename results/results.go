package results

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/provebench/provebench/internal/atomicfile"
)

// SchemaVersion is the version of the document layout. Readers reject other
// versions rather than misreading them; bump it on any incompatible change.
// 2: series columns delta-encoded (series_encoding.go); schema 1 is still
// read (ReadsSchema).
const SchemaVersion = 2

// Run is one invocation of `provebench run`.
type Run struct {
	Schema      int    `json:"schema"`
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version"`
	// ToolSHA256 is the hex SHA-256 of the provebench binary that ran:
	// merge refuses shards of different binaries where the commit
	// (Environment.GitCommit) cannot tell builds apart. Absent in older
	// documents and where the binary could not be read.
	ToolSHA256 string    `json:"tool_sha256,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Complete is false while the run is in progress and when it was
	// interrupted; every repetition recorded is finished either way.
	Complete    bool        `json:"complete"`
	Environment Environment `json:"environment"`
	// ScenarioFiles are the scenario files the configurations came from,
	// in the order given, with a hash of their content: merge refuses
	// shards of different files.
	ScenarioFiles []ScenarioFile `json:"scenario_files,omitempty"`
	// RunOrder is the order the repetitions ran in: empty for one
	// configuration after another, RunOrderInterleaved for rounds over
	// the configurations (run --interleave). Scenarios are in declared
	// order either way. A merged document has the shards' order when they
	// all agree, else none: each of Shards then has its own.
	RunOrder string `json:"run_order,omitempty"`
	// Shard is set when this run ran one shard of a sweep (run --shard).
	Shard *Shard `json:"shard,omitempty"`
	// Shards is set on a document merged from shards (provebench merge):
	// each shard's run, host included. Environment is then the first
	// shard's, and every scenario names its shard (Scenario.Shard).
	Shards []ShardRun `json:"shards,omitempty"`
	// Simulated is set when the document holds `provebench simulate`'s
	// predictions rather than measurements.
	Simulated *Simulation `json:"simulated,omitempty"`
	Scenarios []Scenario  `json:"scenarios"`
}

// RunOrderInterleaved is Run.RunOrder of a run whose measured repetitions
// ran in rounds: repetition 1 of every configuration, then repetition 2 of
// every one, and so on, each configuration's warm-ups right before its
// first measured repetition; a drifting host then slows every
// configuration alike.
const RunOrderInterleaved = "interleaved"

// Simulation says where a simulated document's figures come from.
type Simulation struct {
	// Calibration names the results documents the stage costs were fitted
	// to; empty when every scenario wrote its own costs.
	Calibration []string `json:"calibration,omitempty"`
	// Model is the fitted model, as simulate --explain prints it.
	Model json.RawMessage `json:"model,omitempty"`
}

// ScenarioFile identifies one scenario file a run loaded.
type ScenarioFile struct {
	// Path is the file as given on the command line, or embedded:NAME.
	Path string `json:"path"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
}

// Shard says which share of a sweep a run ran. The sweep is every
// configuration the scenario files and run's flags select, in their
// expanded order; the configuration at position p (from 0) belongs to
// shard p mod Count + 1.
type Shard struct {
	Index int `json:"index"` // 1..Count
	Count int `json:"count"`
	// Configurations is the number of configurations in the whole sweep.
	Configurations int `json:"configurations"`
	// Positions are the sweep positions of this shard's configurations,
	// in the shard's order: Scenarios[i] is at Positions[i] (an interrupted run
	// has fewer scenarios than positions).
	Positions []int `json:"positions"`
	// Plan is a hash of the whole sweep (every configuration's name and
	// resolved settings, in order): shards with the same plan split the
	// same sweep.
	Plan string `json:"plan"`
}

// ShardRun is one shard's run, kept in a merged document.
type ShardRun struct {
	Index       int         `json:"index"`
	Count       int         `json:"count"`
	StartedAt   time.Time   `json:"started_at"`
	FinishedAt  time.Time   `json:"finished_at,omitzero"`
	Complete    bool        `json:"complete"`
	Environment Environment `json:"environment"`
	// RunOrder is the shard's Run.RunOrder.
	RunOrder string `json:"run_order,omitempty"`
}

// Environment describes the host the run measured.
type Environment struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Kernel      string `json:"kernel,omitempty"`
	CPUModel    string `json:"cpu_model"`
	CPUs        int    `json:"cpus"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	MemoryBytes uint64 `json:"memory_bytes"`
	GoVersion   string `json:"go_version"`
	// GitCommit is the commit provebench was built from (vcs.revision),
	// with "+dirty" for a tree with uncommitted changes; absent for a
	// build without VCS data.
	GitCommit string `json:"git_commit,omitempty"`
	// NVML tells whether GPU sampling was available; when false, every GPU
	// figure is absent (not zero).
	NVML          bool   `json:"nvml"`
	DriverVersion string `json:"driver_version,omitempty"`
	GPUs          []GPU  `json:"gpus,omitempty"`
	// Settings are the environment variables set for the run that change
	// what the prover does (PROVEBENCH_MSM_PRECOMPUTE, PROVEBENCH_CUDA_SYNC,
	// CUDA_LAUNCH_BLOCKING, GOGC, ...): two runs of one binary that
	// differ here measured different provers.
	Settings map[string]string `json:"settings,omitempty"`
}

// GPU is one device of the host.
type GPU struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	UUID        string `json:"uuid,omitempty"`
	MemoryBytes uint64 `json:"memory_bytes"`
}

// Scenario is one configuration and its repetitions.
type Scenario struct {
	Name string `json:"name"`
	// Shard is the index of the shard (in Run.Shards) that ran this
	// configuration, in a merged document; 0 otherwise.
	Shard  int    `json:"shard,omitempty"`
	Source string `json:"source,omitempty"`
	// File is the scenario file Name is scoped by (its base name without
	// extension); a name several files of the run define is qualified as
	// File:name. Empty in documents written before names were scoped.
	File        string            `json:"file,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Description string            `json:"description,omitempty"`
	// Driver is "exec" for an external command run by the exec driver;
	// absent for the built-in pipeline. An exec scenario's strategy and
	// backend read "exec" too.
	Driver string `json:"driver,omitempty"`
	// Summary fields, duplicated from Spec so readers need not parse it.
	Strategy    string `json:"strategy"`
	Backend     string `json:"backend"`
	KeyKind     string `json:"key_kind"`
	Verifiable  bool   `json:"verifiable"`
	Constraints int    `json:"constraints"`
	Partitions  int    `json:"partitions_per_proof"`
	Proofs      int    `json:"proofs"`
	// Spec is the full resolved configuration (run.Spec as JSON).
	Spec        json.RawMessage `json:"spec"`
	Repetitions []Repetition    `json:"repetitions"`
}

// Status is how a repetition ended.
type Status string

// Repetition outcomes.
const (
	StatusOK          Status = "ok"
	StatusFailed      Status = "failed"       // the child reported an error
	StatusMemoryLimit Status = "memory-limit" // RSS passed the scenario's limit; stopped
	StatusTimeout     Status = "timeout"      // ran past the scenario's timeout; stopped
	StatusCrashed     Status = "crashed"      // the child died (signal, OOM kill, bad exit)
	StatusCancelled   Status = "cancelled"    // the user interrupted the run
)

// Setup steps a repetition times before its clock starts
// (Repetition.SetupStages). A backend's own steps follow as
// "<backend>.<step>" (prover.SetupReporter).
const (
	SetupKeyRead       = "key_read"         // the proving key from the cache
	SetupBackendOpen   = "backend_open"     // devices, contexts, kernels' first launch
	SetupKeyToDevice   = "key_to_device"    // Load: upload, precompute, wait
	SetupWitnessCache  = "witness_cache"    // workload.synthesis: cached
	SetupPinPool       = "pin_pool"         // page-locked dataset memory (warm)
	SetupWarmPartition = "warmup_partition" // one partition per device (warm)
)

// Repetition is one run of a configuration in its own child process.
// Figures marked "kernel" are the kernel's exact accounting; "sampled" ones
// come from polling at the sampling interval.
//
// It is also the one measurement contract between the processes of a
// repetition, as benchfmt.Result is x/perf's: the process that measures
// the work (the pipeline's child, the exec supervisor) fills its figures
// through its probes (run/sample.Probe) and sends this type as is; the
// runner adopts it (Adopt) and adds what only it sees from outside. A new
// figure is its probe, its field here and its entry in the metric table
// (metrics.go).
type Repetition struct {
	// Index numbers the repetition from 1, warm-ups and measured ones
	// separately (in ab, the pair the repetition belongs to).
	Index     int       `json:"index"`
	Warmup    bool      `json:"warmup"`
	Status    Status    `json:"status"`
	Error     string    `json:"error,omitempty"`
	StartedAt time.Time `json:"started_at"`

	// WallSeconds is the pipeline's run time (first admission to last proof).
	WallSeconds float64 `json:"wall_seconds"`
	// ProcessSeconds is the child's lifetime, key loading included.
	ProcessSeconds float64 `json:"process_seconds"`

	Partitions          int     `json:"partitions"`
	FailedPartitions    int     `json:"failed_partitions"`
	Proofs              int     `json:"proofs"`
	PartitionsPerSecond float64 `json:"partitions_per_second"`
	SecondsPerProof     float64 `json:"seconds_per_proof"`
	Verifiable          bool    `json:"verifiable"`
	ProofsVerified      int     `json:"proofs_verified"`

	// PeakRSSBytes is the kernel's peak resident set of the child (VmHWM,
	// or wait4's ru_maxrss when the child died before it could be read).
	PeakRSSBytes uint64 `json:"peak_rss_bytes"`
	// PeakRSSSource says where PeakRSSBytes comes from: the child's own
	// VmHWM read as it finished (exact), the last VmHWM the parent sampled
	// (a child that died: exact up to its last interval), or wait4's
	// ru_maxrss (an upper bound: Linux folds the parent's peak into it).
	PeakRSSSource string `json:"peak_rss_source,omitempty"`
	// PeakRSSSampledBytes is the highest RSS sampled.
	PeakRSSSampledBytes uint64 `json:"peak_rss_sampled_bytes"`
	// PeakAnonBytes is the peak of the process's anonymous memory: what
	// the work allocated, without the resident pages of the binary and
	// other mapped files that PeakRSSBytes also counts (whose number
	// depends on how the binary sits in the page cache, not on the code).
	// A lower bound, the larger of the kernel's peak less the file-backed
	// and shared pages resident at the window's end (exact when none was
	// faulted in after the peak) and the highest RssAnon sampled in the
	// window (run/sample's peakAnon). Nil where /proc/self/status could
	// not be read, and for the exec driver.
	PeakAnonBytes *uint64 `json:"peak_anon_bytes,omitempty"`
	// GPU figures are sampled through NVML; nil when NVML is absent, when
	// no sample succeeded, and (per process) when NVML cannot see the
	// process.
	PeakGPUMemoryBytes       *uint64 `json:"peak_gpu_memory_bytes,omitempty"`
	PeakGPUDeviceMemoryBytes *uint64 `json:"peak_gpu_device_memory_bytes,omitempty"`
	// MeanGPUUtilization is NVML's utilisation as a fraction (0..1).
	MeanGPUUtilization *float64 `json:"mean_gpu_utilization,omitempty"`
	// DeviceBusyFraction is the backend's own busy time over the
	// pipeline's wall time (WallSeconds), averaged over devices (CPU and
	// CUDA backends alike). Nil where no backend reports its busy time
	// (the exec driver): absent, not 0.
	DeviceBusyFraction *float64 `json:"device_busy_fraction,omitempty"`
	// SteadyDeviceBusyFraction is the same over the steady state: the time
	// between 10% and 90% of the partitions done, leaving out the ramp-up
	// (first syntheses, nothing to prove yet) and the drain. Nil when the
	// run is too short, or sampled too coarsely, to tell.
	SteadyDeviceBusyFraction *float64 `json:"steady_device_busy_fraction,omitempty"`

	// DeviceSecondsPerPartition is the device time of a typical partition
	// on the device's own clock (CUDA events on a GPU; the GPU worker's
	// busy time on the CPU backend): the sum of its device stages (NTT
	// region, MSMs, download), each the median over the partitions, so
	// that one slow partition of a short run does not move it. It does not move with host load, so it is
	// what gates a prover change. Nil when no partition completed, and
	// for the exec driver.
	DeviceSecondsPerPartition *float64 `json:"device_seconds_per_partition,omitempty"`
	// DeviceStageSeconds is the median device time per partition of each
	// device stage (ntt, msm_a, msm_b1, msm_b2, msm_l, msm_h, download),
	// on the same clock.
	DeviceStageSeconds map[string]float64 `json:"device_stage_seconds,omitempty"`

	// Measure is how the repetition's clock was started: "warm" (the
	// default: the clock starts once the prover is ready, key resident and
	// device warm, as in a daemon) or "cold" (setup inside the clock).
	// Absent in documents written before the distinction.
	Measure string `json:"measure,omitempty"`
	// SetupSeconds is the time from the child's start until the prover was
	// ready (key loaded, backend opened, key on the device, warm-up), not
	// counted in WallSeconds when Measure is "warm". SetupStages splits it
	// by stage (seconds). Absent for the exec driver and old documents.
	SetupSeconds *float64           `json:"setup_seconds,omitempty"`
	SetupStages  map[string]float64 `json:"setup_stages,omitempty"`
	// FirstStartSeconds is how long the backend's Start took for the
	// first partition a GPU worker took (upload and the NTT region's
	// launch): a device still starting up shows here. Absent when no
	// partition reached a GPU worker.
	FirstStartSeconds *float64 `json:"first_start_seconds,omitempty"`
	// UnpooledBuffers counts the dataset buffers that a warm start's
	// page-locked pool could not serve (more datasets alive than it
	// reserved: a pile-up); they were synthesized into ordinary memory.
	// Absent without a pool (the CPU backend, a cold start).
	UnpooledBuffers *int64 `json:"unpooled_buffers,omitempty"`

	// EnergyJoules is the GPUs' energy over the measured window, from
	// NVML's total energy counter (summed over the devices the run used);
	// JoulesPerProof divides it by the proofs done. Absent, not zero,
	// without NVML or where the device does not count energy.
	EnergyJoules   *float64 `json:"energy_joules,omitempty"`
	JoulesPerProof *float64 `json:"joules_per_proof,omitempty"`

	// RunCPUSeconds is the CPU time (user + system) the child spent over
	// the measured run alone, from its own rusage before and after: a warm
	// start's setup (key upload, page-locking, the warm-up partition) is
	// not in it. Absent for the exec driver and older documents, where
	// CPUSeconds falls back to the whole process's figures below.
	RunCPUSeconds *float64 `json:"run_cpu_seconds,omitempty"`

	CPUUserSeconds   float64 `json:"cpu_user_seconds"`
	CPUSystemSeconds float64 `json:"cpu_system_seconds"`

	// MinorFaults and MajorFaults are the child's page faults over the
	// measured run, from its own rusage before and after (as
	// RunCPUSeconds): a minor fault maps a page without I/O (the first
	// touch of fresh memory), a major one reads it from disk. For the exec
	// driver, the command's process tree over its life (wait4's, as its
	// CPU time). Absent where they could not be read, and in older
	// documents.
	MinorFaults *int64 `json:"minor_faults,omitempty"`
	MajorFaults *int64 `json:"major_faults,omitempty"`

	// PeakCounters are the pipeline's buffer counters' peaks (exact, kept
	// by the counters themselves). FinalCounters are the live counters at
	// the end: all zero in a correct run.
	PeakCounters  map[string]int64 `json:"peak_counters,omitempty"`
	FinalCounters map[string]int64 `json:"final_counters,omitempty"`

	// Stages summarises per-partition stage times: pipeline stages
	// (synthesis, queue_wait, gpu_start, finalize, dealloc) and the
	// backend's own (ntt, msm_*, assemble, ...).
	Stages map[string]StageSummary `json:"stages,omitempty"`

	Series *Series `json:"series,omitempty"`

	// HeapProfile names the repetition's heap profile (pprof, beside
	// results.json; `go tool pprof FILE`), taken when the child's Go heap
	// in use peaked, at HeapProfileSeconds since the pipeline's start.
	// Absent unless the run asked for heap profiles.
	HeapProfile        string   `json:"heap_profile,omitempty"`
	HeapProfileSeconds *float64 `json:"heap_profile_seconds,omitempty"`
	// The exec driver's own figures (absent for the built-in pipeline).
	// ExitCode is the command's exit status (-1 when a signal ended it,
	// named in ExitSignal); StderrTail the last lines it printed on
	// stderr; PeakPSSBytes the highest sampled proportional set summed
	// over the process tree (shared pages counted once); Processes every
	// process of the tree with its own peak, largest first.
	ExitCode     *int          `json:"exit_code,omitempty"`
	ExitSignal   string        `json:"exit_signal,omitempty"`
	StderrTail   string        `json:"stderr_tail,omitempty"`
	PeakPSSBytes uint64        `json:"peak_pss_bytes,omitempty"`
	Processes    []ProcessPeak `json:"processes,omitempty"`
	// RejectedLines counts the output lines the exec driver refused to
	// read (a TIMELINE offset that is not finite or not plausible, a
	// rule's value that does not fit a counter, a line longer than it
	// keeps), and RejectedLine says why the first one was.
	RejectedLines int    `json:"rejected_lines,omitempty"`
	RejectedLine  string `json:"rejected_line,omitempty"`
	// HostLoad is how busy the host was while the repetition ran, from the
	// parent's side; absent from runs that did not record it.
	HostLoad *HostLoad `json:"host_load,omitempty"`

	// ProverSettings are the choices the backend made at load that change
	// what it measures (the CUDA backend: each device's precompute factor,
	// how host threads wait for the device); absent where it made none.
	ProverSettings map[string]string `json:"prover_settings,omitempty"`

	// CPUBreakdown splits the run's CPU time by where it went; absent
	// where it could not be read (the exec driver, other systems).
	CPUBreakdown *CPUBreakdown `json:"cpu_breakdown,omitempty"`

	// Worker is set when a process that stayed warm served this
	// repetition after setting up once (run --reuse-process, ab's warm
	// sides); absent for a repetition in a process of its own.
	Worker *Worker `json:"worker,omitempty"`
}

// CPUBreakdown splits a repetition's CPU time over its run by where it
// went, so that the spread between identical repetitions can be traced to
// a mechanism: the Go collector, a thread that spins while it waits for
// the device, the scheduler taking cores away.
type CPUBreakdown struct {
	// GCSeconds is the Go collector's CPU time (runtime/metrics'
	// /cpu/classes/gc/total, assists included: an estimate the runtime
	// keeps, comparable to the other classes), ScavengeSeconds the time
	// spent returning memory to the kernel.
	GCSeconds       float64 `json:"gc_seconds"`
	ScavengeSeconds float64 `json:"scavenge_seconds"`
	// Threads is the CPU time by thread name (/proc/self/task: Go's
	// threads carry the binary's name; threads a library started, such
	// as CUDA's, their own), at the kernel's 10 ms resolution. A thread
	// that ended before the run did is missing.
	Threads map[string]float64 `json:"threads,omitempty"`
	// BusiestThreadSeconds is the busiest single thread's CPU time: a
	// thread that spins while it waits for the device is busy for about
	// as long as the device works.
	BusiestThreadSeconds float64 `json:"busiest_thread_seconds"`
	// VoluntarySwitches and InvoluntarySwitches are context switches
	// (getrusage): involuntary ones are the scheduler taking a core away,
	// from a neighbour or from more runnable threads than cores.
	VoluntarySwitches   int64 `json:"voluntary_switches"`
	InvoluntarySwitches int64 `json:"involuntary_switches"`
}

// Worker describes a repetition served by a long-lived process: the
// prover's setup (key on the device, pool, warm-up) was paid before the
// first repetition it served and is recorded there alone.
type Worker struct {
	// Served numbers the repetitions this process has run, from 1.
	Served int `json:"served"`
	// PID is the worker's process id: repetitions with the same PID
	// share a process, and whatever that process drew at its start
	// (memory placement, a slower core) they share too.
	PID int `json:"pid"`
	// PeakReset is true when the kernel's peak RSS was reset at the
	// repetition's start (Linux: writing 5 to /proc/PID/clear_refs), so
	// that PeakRSSBytes is the repetition's own. Where that failed,
	// PeakRSSBytes is the highest RSS sampled over the repetition
	// (PeakRSSSource "sampled").
	PeakReset bool `json:"peak_reset"`
}

// HostLoad is the host's load during one repetition: what else competed
// for the CPUs (other jobs, a noisy neighbour, the hypervisor).
type HostLoad struct {
	// Load1 is the one-minute load average at the repetition's end
	// (/proc/loadavg): runnable threads, the repetition's own included.
	Load1 float64 `json:"load1"`
	// StealFraction is the share of all CPU time over the repetition that
	// the hypervisor gave to other guests (/proc/stat steal), 0..1.
	StealFraction float64 `json:"steal_fraction"`
	// OthersCPUFraction is the share of the host's CPU time over the
	// repetition that processes other than the measured ones used (the
	// host's busy time from /proc/stat less the measured processes' own
	// CPU time), 0..1: what neighbours took while it ran. Unlike the load
	// average, which lags by a minute, it is the repetition's own window.
	// Absent where it could not be measured.
	OthersCPUFraction *float64 `json:"others_cpu_fraction,omitempty"`
}

// QuietOthers is the share of the host's CPU time neighbours may use
// during a repetition for its wall time to count as measured on a quiet
// host: a tenth of the machine (0.2 of a CPU on 2 cores, 1.6 on 16).
const QuietOthers = 0.10

// Quiet reports whether the repetition ran on a quiet host: neighbours
// used at most QuietOthers of the CPU time and the hypervisor stole at most
// 5%. ok is false when the figure was not measured.
func (h *HostLoad) Quiet() (quiet, ok bool) {
	if h == nil || h.OthersCPUFraction == nil {
		return false, false
	}
	return *h.OthersCPUFraction <= QuietOthers && h.StealFraction <= 0.05, true
}

// High reports whether the load could have distorted timed figures on a
// host of cpus logical CPUs: more runnable threads than CPUs, or over 5%
// of the CPU time stolen.
func (h *HostLoad) High(cpus int) bool {
	if h == nil {
		return false
	}
	return (cpus > 0 && h.Load1 > float64(cpus)) || h.StealFraction > 0.05
}

// ProcessPeak is one process of an exec repetition's tree: the largest of
// its sampled VmHWM and, once reaped, wait4's ru_maxrss.
type ProcessPeak struct {
	PID          int    `json:"pid"`
	Name         string `json:"name,omitempty"`
	PeakRSSBytes uint64 `json:"peak_rss_bytes"`
}

// StageSummary summarises one stage's durations over a repetition.
type StageSummary struct {
	Count        int     `json:"count"`
	TotalSeconds float64 `json:"total_seconds"`
	MeanSeconds  float64 `json:"mean_seconds"`
	P50Seconds   float64 `json:"p50_seconds"`
	P90Seconds   float64 `json:"p90_seconds"`
	MaxSeconds   float64 `json:"max_seconds"`
}

// Series is the sampled time series of a repetition, columnar. Every column
// has one value per element of T. T is seconds since the pipeline started
// (negative while the child loaded its key).
type Series struct {
	IntervalSeconds float64   `json:"interval_seconds"`
	T               []float64 `json:"t"`
	RSSBytes        []uint64  `json:"rss_bytes"`
	// GPU columns are absent without NVML; a sample NVML failed to take
	// is null, not 0, and the per-process column is null throughout where
	// NVML cannot see the process (a container's own PID namespace).
	GPUMemoryBytes       []*uint64  `json:"gpu_memory_bytes,omitempty"`
	GPUDeviceMemoryBytes []*uint64  `json:"gpu_device_memory_bytes,omitempty"`
	GPUUtilization       []*float64 `json:"gpu_utilization,omitempty"` // fraction, 0..1
	// Counters are the child's series by name: the pipeline's counters,
	// the backend's device stats (device_memory_bytes, device_queued,
	// device_busy_us, device_span_us) and the RSS account's figures
	// (go_heap_inuse_bytes, go_heap_released_bytes, go_runtime_bytes,
	// go_gc_cycles, key_resident_bytes); the report's glossary defines each.
	Counters map[string][]int64 `json:"counters,omitempty"`
}

// Series counters of the warm start's page-locked pool (CUDA backend): what
// the pool holds, and the part of it no dataset uses. The pool is reserved
// (its pages touched) before the clock starts, so the RSS at t=0 holds it
// and datasets allocated in it add nothing.
const (
	CounterPinnedPool = "host_pinned_pool_bytes"
	CounterPinnedIdle = "host_pinned_idle_bytes"
)

// Values of Repetition.Measure.
const (
	MeasureWarm = "warm"
	MeasureCold = "cold"
)

// Sources of Repetition.PeakRSSBytes.
const (
	PeakFromVmHWM        = "vmhwm"
	PeakFromSampledVmHWM = "vmhwm-sampled"
	PeakFromRusage       = "rusage"
	// PeakFromSampled is the highest RSS sampled: a warm worker's
	// repetition where the kernel's peak could not be reset.
	PeakFromSampled = "sampled"
	// An exec repetition's process tree: the cgroup's memory.peak (the
	// kernel's, page cache included) where the host delegates a cgroup
	// with the memory controller, else "tree": the larger of the highest
	// sampled RSS summed over the tree and the largest single process's
	// kernel peak (VmHWM, ru_maxrss).
	PeakFromCgroup = "cgroup-memory.peak"
	PeakFromTree   = "tree"
)

// ScenarioEnvironment is the host that ran the scenario at index i: its
// shard's in a merged document, else the run's.
func (r *Run) ScenarioEnvironment(i int) *Environment {
	if k := r.Scenarios[i].Shard; k > 0 {
		for j := range r.Shards {
			if r.Shards[j].Index == k {
				return &r.Shards[j].Environment
			}
		}
	}
	return &r.Environment
}

// CPUSeconds is the CPU time of the repetition's measured work: the run's
// own (RunCPUSeconds) where recorded, else the whole process's user and
// system time (wait4), setup included.
func (r *Repetition) CPUSeconds() float64 {
	if r.RunCPUSeconds != nil {
		return *r.RunCPUSeconds
	}
	return r.CPUUserSeconds + r.CPUSystemSeconds
}

// Adopt takes the figures a measuring process sent as the record's own,
// keeping the record's identity: its index, warm-up flag and start.
func (r *Repetition) Adopt(figures Repetition) {
	id := *r
	*r = figures
	r.Index, r.Warmup, r.StartedAt = id.Index, id.Warmup, id.StartedAt
}

// Derive fills the figures that follow from others, once a driver's are
// in: partitions per second and seconds per proof from the wall time,
// joules per proof from the energy (absent without it).
func (r *Repetition) Derive() {
	r.PartitionsPerSecond, r.SecondsPerProof, r.JoulesPerProof = 0, 0, nil
	if r.WallSeconds > 0 {
		r.PartitionsPerSecond = float64(r.Partitions) / r.WallSeconds
	}
	if r.Proofs > 0 {
		r.SecondsPerProof = r.WallSeconds / float64(r.Proofs)
	}
	if r.EnergyJoules != nil && r.Proofs > 0 {
		j := *r.EnergyJoules / float64(r.Proofs)
		r.JoulesPerProof = &j
	}
}

// Measured reports whether the repetition counts in statistics: finished
// and not a warm-up.
func (r *Repetition) Measured() bool { return !r.Warmup && r.Status == StatusOK }

// Failed reports whether the repetition is a failure of its
// configuration: it failed, passed its memory limit or its timeout, or
// crashed. A cancelled repetition is the user's doing, not the code's.
func (r *Repetition) Failed() bool {
	switch r.Status {
	case StatusFailed, StatusMemoryLimit, StatusTimeout, StatusCrashed:
		return true
	}
	return false
}

// ErrSchema marks a document of another schema version or not a results
// document at all.
var ErrSchema = errors.New("not a provebench results document of a supported schema")

// WriteFile writes data to path atomically: a reader (or a crash) sees the
// old file or the new one, never a partial one.
func WriteFile(path string, data []byte) error { return atomicfile.Write(path, data) }

// Write encodes the run to path atomically: compact JSON in gzip when the
// name ends in .gz, indented JSON otherwise (FormatOf).
func Write(path string, r *Run) error { return WriteFormat(path, r, FormatOf(path)) }

// SummaryOf is a stage's summary from its durations' figures.
func SummaryOf(count int, total, mean, p50, p90, maxDur time.Duration) StageSummary {
	return StageSummary{
		Count: count, TotalSeconds: total.Seconds(), MeanSeconds: mean.Seconds(),
		P50Seconds: p50.Seconds(), P90Seconds: p90.Seconds(), MaxSeconds: maxDur.Seconds(),
	}
}
