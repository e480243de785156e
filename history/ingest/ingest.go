package ingest

import (
	"fmt"

	"github.com/provebench/provebench/history/store"
	"github.com/provebench/provebench/results"
)

// Kind says how a metric is measured, which decides how a change in it
// reads: a timed figure moves with the host's load, a memory figure is
// the kernel's or the device's count.
type Kind string

// Kinds of metric.
const (
	Timed  Kind = "timed"
	Memory Kind = "memory"
	Energy Kind = "energy"
)

// Metric is a figure the history keeps of every measured repetition.
type Metric struct {
	Name string
	Kind Kind
	// HigherIsBetter is set for throughputs; every other metric is better
	// lower.
	HigherIsBetter bool
	// Unit is "s", "B", "1/s" or "J".
	Unit  string
	value func(r *results.Repetition) (float64, bool)
}

func always(f func(r *results.Repetition) float64) func(*results.Repetition) (float64, bool) {
	return func(r *results.Repetition) (float64, bool) { return f(r), true }
}

func present(f func(r *results.Repetition) *float64) func(*results.Repetition) (float64, bool) {
	return func(r *results.Repetition) (float64, bool) {
		if p := f(r); p != nil {
			return *p, true
		}
		return 0, false
	}
}

// Metrics are the figures kept, by the names results documents and compare
// use.
var Metrics = []Metric{
	{Name: "seconds_per_proof", Kind: Timed, Unit: "s", value: always(func(r *results.Repetition) float64 { return r.SecondsPerProof })},
	{Name: "partitions_per_second", Kind: Timed, Unit: "1/s", HigherIsBetter: true, value: always(func(r *results.Repetition) float64 { return r.PartitionsPerSecond })},
	{Name: "wall_seconds", Kind: Timed, Unit: "s", value: always(func(r *results.Repetition) float64 { return r.WallSeconds })},
	{Name: "cpu_seconds", Kind: Timed, Unit: "s", value: always(func(r *results.Repetition) float64 { return r.CPUSeconds() })},
	{Name: "device_seconds_per_partition", Kind: Timed, Unit: "s", value: present(func(r *results.Repetition) *float64 { return r.DeviceSecondsPerPartition })},
	{Name: "setup_seconds", Kind: Timed, Unit: "s", value: present(func(r *results.Repetition) *float64 { return r.SetupSeconds })},
	{Name: "peak_rss_bytes", Kind: Memory, Unit: "B", value: always(func(r *results.Repetition) float64 { return float64(r.PeakRSSBytes) })},
	{Name: "peak_gpu_memory_bytes", Kind: Memory, Unit: "B", value: func(r *results.Repetition) (float64, bool) {
		if r.PeakGPUMemoryBytes == nil {
			return 0, false
		}
		return float64(*r.PeakGPUMemoryBytes), true
	}},
	{Name: "joules_per_proof", Kind: Energy, Unit: "J", value: present(func(r *results.Repetition) *float64 { return r.JoulesPerProof })},
}

// Lookup returns the metric of that name.
func Lookup(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Document is one results document as history rows.
type Document struct {
	Run     store.Run
	Samples []store.Sample
}

// FromRun extracts a results document's rows. source names the file.
// Simulated documents are refused (they predict, they do not measure), as
// are documents without a git commit; a merged document's rows carry the
// first shard's host, as its environment does.
func FromRun(doc *results.Run, source string) (Document, error) {
	if doc.Simulated != nil {
		return Document{}, fmt.Errorf("%s: a simulated document holds predictions, not measurements", source)
	}
	env := doc.Environment
	if env.GitCommit == "" {
		return Document{}, fmt.Errorf("%s: %w", source, store.ErrNoCommit)
	}
	out := Document{Run: store.Run{
		Commit: env.GitCommit, Time: doc.StartedAt, Host: env.Hostname, CPUModel: env.CPUModel,
		ToolVersion: doc.ToolVersion, Source: source,
	}}
	for i := range doc.Scenarios {
		sc := &doc.Scenarios[i]
		for j := range sc.Repetitions {
			r := &sc.Repetitions[j]
			if !r.Measured() {
				continue
			}
			for _, m := range Metrics {
				if v, ok := m.value(r); ok {
					out.Samples = append(out.Samples, store.Sample{
						Backend: sc.Backend, Configuration: sc.Name, Metric: m.Name, Repetition: r.Index, Value: v,
					})
				}
			}
		}
	}
	if len(out.Samples) == 0 {
		return Document{}, fmt.Errorf("%s: no measured repetition to add", source)
	}
	return out, nil
}

// Read reads a results document (plain or gzip) and extracts its rows.
func Read(path string) (Document, error) {
	doc, err := results.Read(path)
	if err != nil {
		return Document{}, err
	}
	return FromRun(doc, path)
}
