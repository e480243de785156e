package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/internal/version"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/sample"
	"github.com/provebench/provebench/run/supervise"
)

// GPUSampler reads GPU memory and utilisation for a process (NVML); the
// supervising loop's (supervise.GPUSampler), named here for the runner's
// callers.
type (
	GPUSampler = supervise.GPUSampler
	GPUReading = supervise.GPUReading
)

// Runner runs specs, each repetition in its own child process.
type Runner struct {
	// Exe is the provebench binary children run (`Exe child`).
	Exe string
	// OutDir receives the results document (ResultsPath), rewritten after
	// every repetition.
	OutDir string
	// Format is the results document's storage format; empty means
	// results.FormatGzip (results.json.gz).
	Format results.Format
	// CacheDir is the proving key cache.
	CacheDir string
	// Env describes the host; GPU, if set, samples the GPUs.
	Env results.Environment
	GPU GPUSampler
	// ScenarioFiles and Shard, when set, are recorded in the results: what
	// the specs were loaded from, and which shard of a sweep they are.
	ScenarioFiles []results.ScenarioFile
	Shard         *results.Shard
	// Progress is told what happens; nil for silence.
	Progress Progress
	// Log receives messages such as key generation; nil for silence.
	Log io.Writer
	// Interleave runs the measured repetitions in rounds over the
	// configurations instead of one configuration after another (see
	// runOrder), and records RunOrder interleaved in the document.
	Interleave bool
	// HeapProfiles asks every measured repetition's child for a heap
	// profile (pprof) at its Go heap's peak, written into OutDir.
	HeapProfiles bool
	// Warn receives warnings (a results file that cannot be written, why
	// backend auto did not use CUDA), one line each; nil: Log.
	Warn io.Writer
	// ReuseProcess, when above 0, runs a configuration's repetitions in
	// warm workers: a child process sets the prover up once (key on the
	// device, page-locked pool, warm-up partition) and serves up to this
	// many repetitions in a row, each still measured alone (its own peak,
	// counters and clock), as a daemon serves proofs. A failed repetition
	// ends its worker; the next one starts a new worker. 0: a process per
	// repetition. Configurations with a cold clock always get a process
	// per repetition.
	ReuseProcess int

	autoNoted bool // the reason backend auto chose the CPU was told
}

// warnf writes one warning line.
func (r *Runner) warnf(format string, args ...any) {
	w := r.Warn
	if w == nil {
		w = r.Log
	}
	if w != nil {
		fmt.Fprintf(w, "provebench: warning: "+format+"\n", args...)
	}
}

// Folder is the runner's output folder, whose results files the command
// finishes once the run is over (results.Folder.WriteTables).
func (r *Runner) Folder() results.Folder { return results.Folder{Dir: r.OutDir, Format: r.Format} }

// PrintOrder writes, before an interleaved run, that the measured
// repetitions go in rounds over the configurations (nothing for a run
// of one configuration after another).
func (r *Runner) PrintOrder(w io.Writer, configs int) {
	if r.Interleave {
		fmt.Fprintf(w, "interleaved: measured repetitions in rounds over %s\n", units.Plural(configs, "configuration"))
	}
}

// ResultsPath is where the runner keeps its results document: OutDir's
// results.json.gz, or results.json for results.FormatJSON.
func (r *Runner) ResultsPath() string { return r.Folder().DocumentPath() }

// Run runs every spec's warm-ups and repetitions, one configuration after
// another or, with Interleave, in rounds, and returns the results document
// (its scenarios in the specs' order either way), which it also keeps up to
// date on disk: a run killed at any moment leaves every finished
// repetition in OutDir/results.json. When ctx is cancelled the repetition
// in flight is recorded as cancelled, the document is written with
// Complete false, and Run returns ctx's error.
//
// An output directory that cannot be written fails, wrapping ErrOutDir,
// before any work (callers hold its lock: LockOutDir). A results
// file that cannot be written mid-sweep does not stop the sweep: the write
// is retried after every repetition, and if the last one fails too the
// document goes to a file in the temporary directory, which the error
// names.
func (r *Runner) Run(ctx context.Context, specs []Spec) (*results.Run, error) {
	sw, err := r.begin(specs)
	if err != nil {
		return nil, err
	}
	doc := sw.doc
	order := runOrder(specs, r.Interleave)
	sw.progress.Begin(len(specs), len(order))
	defer sw.release()
	for i, st := range order {
		if err := sw.startThrough(ctx, st.config); err != nil {
			return r.stopped(ctx, doc, err)
		}
		if sw.drivers[st.config] == nil {
			continue // its prepare failed, which is recorded
		}
		sw.repetition(ctx, st)
		if ctx.Err() != nil {
			return r.interrupted(ctx, doc)
		}
		if i+1 == len(order) || order[i+1].config != st.config {
			// One warm worker at a time: another configuration's would
			// hold memory (its key, its pool) under this one's
			// measurement.
			sw.drivers[st.config].release()
		}
	}
	// Configurations with nothing to run are recorded all the same.
	if err := sw.startThrough(ctx, len(specs)-1); err != nil {
		return r.stopped(ctx, doc, err)
	}
	doc.Complete = true
	doc.FinishedAt = time.Now().UTC()
	return doc, r.finalSave(r.ResultsPath(), doc)
}

// begin writes a new, empty results document into OutDir and returns the
// sweep that fills it.
func (r *Runner) begin(specs []Spec) (*sweep, error) {
	if err := os.MkdirAll(r.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOutDir, err)
	}
	doc := &results.Run{
		Schema:      results.SchemaVersion,
		Tool:        "provebench",
		ToolVersion: toolVersion(),
		ToolSHA256:  executableSHA256(),
		StartedAt:   time.Now().UTC(),
		Environment: r.Env,
		// Empty, not null, when a shard has no configurations.
		Scenarios:     []results.Scenario{},
		ScenarioFiles: r.ScenarioFiles,
		Shard:         r.Shard,
	}
	if r.Interleave {
		doc.RunOrder = results.RunOrderInterleaved
	}
	path := r.ResultsPath()
	// The first save also removes a document of the other format that an
	// earlier command left, beside which this one could not be read.
	if err := r.Folder().SaveDocument(doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOutDir, err)
	}
	sw := &sweep{r: r, specs: specs, doc: doc, save: r.saver(path, doc), progress: r.Progress}
	if sw.progress == nil {
		sw.progress = nopProgress{}
	}
	return sw, nil
}

// sweep is a run in progress: the specs, the document that records them,
// and the drivers of the configurations started so far.
type sweep struct {
	r        *Runner
	specs    []Spec
	doc      *results.Run
	save     func() error
	progress Progress
	// drivers[i] runs specs[i]; nil when its prepare failed. Its length
	// is the number of configurations started.
	drivers []driver
}

// startThrough starts, in declared order, every configuration up to
// specs[c] not started yet: its record in the document, then its driver's
// prepare (a proving key). Starting in declared order whatever order the
// repetitions run in keeps doc.Scenarios[i] the record of specs[i], so the
// document's layout never depends on the run order. A prepare that fails
// fails its configuration, recorded as a failed repetition, not the sweep;
// the error returned is the run's end (an interrupt, a spec that cannot be
// recorded).
func (s *sweep) startThrough(ctx context.Context, c int) error {
	for i := len(s.drivers); i <= c; i++ {
		spec := &s.specs[i]
		sc, err := newScenario(spec)
		if err != nil {
			return err
		}
		s.doc.Scenarios = append(s.doc.Scenarios, sc)
		drv := s.r.driverFor(spec)
		if err := drv.prepare(ctx, spec, &s.doc.Scenarios[i]); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cur := &s.doc.Scenarios[i]
			cur.Repetitions = append(cur.Repetitions, results.Repetition{
				Status: results.StatusFailed, Error: err.Error(), StartedAt: time.Now().UTC(),
			})
			s.progress.Fail(spec.Name, err)
			_ = s.save()
			drv = nil
		}
		s.drivers = append(s.drivers, drv)
	}
	return nil
}

// release ends every driver's warm worker.
func (s *sweep) release() {
	for _, d := range s.drivers {
		if d != nil {
			d.release()
		}
	}
}

// repetition runs one step of a started configuration, records it and
// saves the document.
func (s *sweep) repetition(ctx context.Context, st step) {
	spec := &s.specs[st.config]
	s.progress.RepetitionStart(spec, st.index, st.warmup)
	rep := s.drivers[st.config].repetition(ctx, spec, st.index, st.warmup, s.progress)
	cur := &s.doc.Scenarios[st.config]
	cur.Repetitions = append(cur.Repetitions, rep)
	if rep.Verifiable {
		cur.Verifiable = true
	}
	s.progress.RepetitionEnd(spec, &rep)
	_ = s.save()
}

// stopped ends a run that startThrough could not go on with: an interrupt
// saves what finished; any other error returns the document as it is.
func (r *Runner) stopped(ctx context.Context, doc *results.Run, err error) (*results.Run, error) {
	if ctx.Err() != nil {
		return r.interrupted(ctx, doc)
	}
	return doc, err
}

// saver returns the mid-sweep save: a failure is reported once and the
// sweep goes on (the document is in memory, and the final save tries
// again).
func (r *Runner) saver(path string, doc *results.Run) func() error {
	warned := false
	return func() error {
		err := results.Write(path, doc)
		if err != nil && !warned {
			warned = true
			r.warnf("cannot write %s (%v); the sweep goes on and the results are kept in memory", path, err)
		}
		return err
	}
}

// finalSave writes the finished document, or, when its place cannot be
// written, a copy in the temporary directory, so no sweep is lost to a
// full disk or a vanished directory.
func (r *Runner) finalSave(path string, doc *results.Run) error {
	err := results.Write(path, doc)
	if err == nil {
		r.warnIfUnreadable(path)
		return nil
	}
	f, ferr := os.CreateTemp("", "provebench-results-*."+string(results.FormatOf(path)))
	if ferr != nil {
		return fmt.Errorf("write results: %w (and no copy could be kept: %w)", err, ferr)
	}
	f.Close()
	if werr := results.Write(f.Name(), doc); werr != nil {
		return fmt.Errorf("write results: %w (and no copy could be kept: %w)", err, werr)
	}
	return fmt.Errorf("write results: %w; the results are in %s", err, f.Name())
}

// warnIfUnreadable says when a finished document is past the limits every
// reader holds documents to (results.MaxDocumentBytes,
// MaxDocumentValues): report, compare and the rest would refuse it. The
// sweep's figures are kept as written; it tells the user to sample less
// often or split the sweep.
func (r *Runner) warnIfUnreadable(path string) {
	if _, err := results.Read(path); errors.Is(err, results.ErrTooLarge) {
		r.warnf("%v: the readers (report, compare, merge, history, simulate) refuse it; sample less often (--sample-interval) or split the sweep (--filter, --shard)", err)
	}
}

func (r *Runner) interrupted(ctx context.Context, doc *results.Run) (*results.Run, error) {
	doc.FinishedAt = time.Now().UTC()
	if err := r.finalSave(r.ResultsPath(), doc); err != nil {
		return doc, errors.Join(ctx.Err(), err)
	}
	return doc, ctx.Err()
}

// newScenario starts a scenario's record from its spec.
func newScenario(spec *Spec) (results.Scenario, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return results.Scenario{}, fmt.Errorf("scenario %s: %w", spec.Name, err)
	}
	if spec.IsExec() {
		return results.Scenario{
			Name: spec.Name, Source: spec.Source, File: spec.File, Labels: spec.Labels, Description: spec.Description,
			Driver: DriverExec, Strategy: DriverExec, Backend: DriverExec,
			Partitions: spec.Exec.Partitions, Proofs: spec.Exec.Proofs, Spec: raw,
		}, nil
	}
	return results.Scenario{
		Name:        spec.Name,
		Source:      spec.Source,
		File:        spec.File,
		Labels:      spec.Labels,
		Description: spec.Description,
		Strategy:    string(spec.Pipeline.Strategy),
		Backend:     spec.Backend,
		KeyKind:     string(spec.Key.Resolve(spec.Workload.Constraints)),
		Constraints: spec.Workload.Constraints,
		Partitions:  spec.Workload.Partitions,
		Proofs:      spec.Workload.Proofs,
		Spec:        raw,
	}, nil
}

// ensureKey makes sure the scenario's key is in the cache before any child
// starts, so key generation is never inside a measured repetition.
func (r *Runner) ensureKey(ctx context.Context, spec *Spec, sc *results.Scenario) error {
	cache := groth16.Cache{Dir: r.CacheDir}
	if r.Log != nil {
		cache.Log = func(format string, args ...any) { fmt.Fprintf(r.Log, format+"\n", args...) }
	}
	pk, _, err := cache.Get(ctx, spec.Workload.Circuit(), spec.Key)
	if err != nil {
		return fmt.Errorf("proving key for %s: %w", spec.Name, err)
	}
	sc.KeyKind = string(pk.Kind)
	return pk.Close()
}

// toolVersion is the module version and VCS revision baked into the binary.
func toolVersion() string { return version.Read().Short() }

// HostEnvironment describes this host for the results document.
func HostEnvironment(ctx context.Context) results.Environment {
	env, err := sample.Host(ctx)
	if err != nil {
		env.OS, env.Arch = runtime.GOOS, runtime.GOARCH
	}
	env.GOMAXPROCS = runtime.GOMAXPROCS(0)
	env.GoVersion = runtime.Version()
	env.GitCommit = version.Read().Revision()
	for _, name := range proverSettings {
		if v, ok := os.LookupEnv(name); ok {
			if env.Settings == nil {
				env.Settings = map[string]string{}
			}
			env.Settings[name] = v
		}
	}
	return env
}

// proverSettings are the environment variables that change what the
// prover or the Go runtime under it does, recorded with the host.
var proverSettings = []string{
	"PROVEBENCH_MSM_PRECOMPUTE", "PROVEBENCH_CUDA_SYNC", "PROVEBENCH_PIN_DATASETS", "PROVEBENCH_ICICLE_DEVICE",
	"CUDA_LAUNCH_BLOCKING", "GOGC", "GOMEMLIMIT", "GOMAXPROCS", "GODEBUG",
}

// executableSHA256 is the running binary's hash, or empty (absent from the
// document) where the binary cannot be read.
func executableSHA256() string {
	sum, err := version.ExecutableSHA256()
	if err != nil {
		return ""
	}
	return sum
}

// ToolVersion is the module version and VCS revision of this binary, as
// results documents record it.
func ToolVersion() string { return toolVersion() }
