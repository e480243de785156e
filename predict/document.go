package predict

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/sim"
	"github.com/provebench/provebench/spec"
)

// maxSeriesPoints bounds a simulated series: the simulator records every
// event (and every pacer tick), far more than a plot shows.
const maxSeriesPoints = 2000

// MaxSeriesConfigurations is the most configurations whose simulated
// documents keep their series (the timelines): the series are most of a
// document's bytes, and a report draws one timeline per configuration, so a
// sweep of thousands would be gigabytes and thousands of plots. Larger
// sweeps keep every other figure; --filter picks the few to see over time.
const MaxSeriesConfigurations = 100

// Document simulates every spec and writes the predictions as a results
// document: one repetition per configuration (the simulator is
// deterministic), marked simulated and naming the calibration. A
// configuration predicted to pass its memory limit or the host's memory is
// a memory-limit repetition whose error gives the time and the counters.
// Series are kept only when there are at most MaxSeriesConfigurations
// specs; ctx stops it between configurations.
func Document(ctx context.Context, specs []spec.Spec, m *Model, env results.Environment, tool string) (*results.Run, error) {
	keepSeries := len(specs) <= MaxSeriesConfigurations
	if env.MemoryBytes == 0 && len(specs) > 0 {
		// No calibration host: the scenarios' own host describes it.
		h := specs[0].Simulate.Host
		env.MemoryBytes, env.CPUs, env.GOMAXPROCS = uint64(h.Memory), h.Cores, h.Cores
	}
	doc := &results.Run{
		Schema:      results.SchemaVersion,
		Tool:        "provebench",
		ToolVersion: tool,
		StartedAt:   time.Now().UTC(),
		Complete:    true,
		Environment: env,
		Simulated:   &results.Simulation{},
	}
	if m != nil {
		doc.Simulated.Calibration = m.Calibration
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		doc.Simulated.Model = raw
	}
	for i := range specs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		spec := &specs[i]
		o, err := Options(spec, m, int64(env.MemoryBytes))
		if err != nil {
			return nil, err
		}
		o.Timeline = keepSeries
		res, err := sim.Run(o)
		if err != nil {
			return nil, fmt.Errorf("scenario %s (%s): %w", spec.Name, spec.Source, err)
		}
		raw, err := json.Marshal(spec)
		if err != nil {
			return nil, err
		}
		doc.Scenarios = append(doc.Scenarios, results.Scenario{
			Name: spec.Name, Source: spec.Source, Labels: spec.Labels, Description: spec.Description,
			Strategy: string(spec.Pipeline.Strategy), Backend: spec.Backend, KeyKind: string(spec.Key.Resolve(spec.Workload.Constraints)),
			Constraints: spec.Workload.Constraints, Partitions: spec.Workload.Partitions, Proofs: spec.Workload.Proofs,
			Spec: raw, Repetitions: []results.Repetition{repetition(res, doc.StartedAt)},
		})
		r := &doc.Scenarios[len(doc.Scenarios)-1].Repetitions[0]
		m.gpuMemoryOf(r, spec.Workload)
		m.setupOf(r, o)
	}
	doc.FinishedAt = time.Now().UTC()
	return doc, nil
}

// repetition turns one simulated run into a repetition record.
func repetition(res *sim.Result, at time.Time) results.Repetition {
	rep := res.Report
	busy := res.DeviceBusy
	r := results.Repetition{
		Status:              results.StatusOK,
		StartedAt:           at,
		WallSeconds:         rep.Wall.Seconds(),
		ProcessSeconds:      rep.Elapsed.Seconds(),
		Partitions:          rep.PartitionsDone,
		Proofs:              rep.ProofsDone,
		PeakRSSBytes:        uint64(res.PeakRSS),
		PeakRSSSource:       "simulated",
		PeakRSSSampledBytes: uint64(res.PeakRSS),
		DeviceBusyFraction:  &busy,
		PeakCounters:        map[string]int64{},
		FinalCounters:       res.Tracker.Live(),
		Stages:              map[string]results.StageSummary{},
		Series:              series(res.Timeline, res.Tracker.Names()),
	}
	if rep.Wall > 0 && rep.ProofsDone > 0 {
		r.PartitionsPerSecond = float64(rep.PartitionsDone) / rep.Wall.Seconds()
		r.SecondsPerProof = rep.Wall.Seconds() / float64(rep.ProofsDone)
	}
	var snap pipeline.Snapshot
	res.Tracker.Snapshot(&snap)
	for i, name := range res.Tracker.Names() {
		r.PeakCounters[name] = snap.Peaks[i]
	}
	for name, st := range pipeline.Summarize(rep.Partitions) {
		r.Stages[name] = results.SummaryOf(st.Count, st.Total, st.Mean, st.P50, st.P90, st.Max)
	}
	if o := res.OOM; o != nil {
		r.Status = results.StatusMemoryLimit
		r.Error = fmt.Sprintf("predicted out of memory at %.1f s: RSS %s with %d synthesizing, %d waiting to send, %d in the channel, %s of datasets live",
			o.At.Seconds(), units.FormatBytes(o.RSS), o.Counters[pipeline.CounterSynthesizing], o.Counters[pipeline.CounterWaitingSend],
			o.Counters[pipeline.CounterInChannel], units.FormatBytes(o.Counters[pipeline.CounterDatasetBytes]))
	}
	return r
}

// series turns the timeline into a results series of at most
// maxSeriesPoints points: each bucket of time keeps its highest-RSS point,
// so the peaks survive.
func series(tl []sim.Point, names []string) *results.Series {
	if len(tl) == 0 {
		return nil
	}
	end := tl[len(tl)-1].T
	keep := tl
	if len(tl) > maxSeriesPoints && end > 0 {
		keep = nil
		bucket := end/maxSeriesPoints + 1
		for i := 0; i < len(tl); {
			b := tl[i].T / bucket
			best := i
			j := i
			for ; j < len(tl) && tl[j].T/bucket == b; j++ {
				if tl[j].RSS > tl[best].RSS {
					best = j
				}
			}
			keep = append(keep, tl[best])
			i = j
		}
	}
	s := &results.Series{Counters: map[string][]int64{}}
	if len(keep) > 1 {
		s.IntervalSeconds = end.Seconds() / float64(len(keep)-1)
	}
	for _, p := range keep {
		s.T = append(s.T, p.T.Seconds())
		s.RSSBytes = append(s.RSSBytes, uint64(p.RSS))
	}
	for j, name := range names {
		if !pipeline.IsLive(name) {
			continue
		}
		col := make([]int64, len(keep))
		for i, p := range keep {
			col[i] = p.Counters[j]
		}
		s.Counters[name] = col
	}
	return s
}
