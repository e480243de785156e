package run

import (
	"runtime/metrics"
	"syscall"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run/sample"
)

// cpuMeter splits the CPU time of a repetition's run by where it went (see
// results.CPUBreakdown): the Go collector, the scavenger, each thread by
// name and the busiest thread, and the context switches. Two identical
// repetitions that differ in CPU time differ in one of these, which tells
// the harness's share of the noise (a collection, a spinning wait) from
// the prover's.
type cpuMeter struct {
	metrics  []metrics.Sample
	threads  map[int]float64
	switches [2]int64
	ok       bool
}

var cpuClasses = []string{"/cpu/classes/gc/total:cpu-seconds", "/cpu/classes/scavenge/total:cpu-seconds"}

func startCPUMeter() *cpuMeter {
	m := &cpuMeter{metrics: make([]metrics.Sample, len(cpuClasses)), threads: map[int]float64{}}
	for i, name := range cpuClasses {
		m.metrics[i].Name = name
	}
	metrics.Read(m.metrics)
	threads, err := sample.Threads()
	if err != nil {
		return m
	}
	for _, t := range threads {
		m.threads[t.TID] = t.Seconds
	}
	m.switches, m.ok = contextSwitches()
	return m
}

// stop returns the breakdown since start; nil where threads cannot be read.
func (m *cpuMeter) stop() *results.CPUBreakdown {
	if !m.ok {
		return nil
	}
	now := make([]metrics.Sample, len(cpuClasses))
	for i, name := range cpuClasses {
		now[i].Name = name
	}
	metrics.Read(now)
	threads, err := sample.Threads()
	if err != nil {
		return nil
	}
	b := &results.CPUBreakdown{Threads: map[string]float64{}}
	if now[0].Value.Kind() == metrics.KindFloat64 && m.metrics[0].Value.Kind() == metrics.KindFloat64 {
		b.GCSeconds = now[0].Value.Float64() - m.metrics[0].Value.Float64()
	}
	if now[1].Value.Kind() == metrics.KindFloat64 && m.metrics[1].Value.Kind() == metrics.KindFloat64 {
		b.ScavengeSeconds = now[1].Value.Float64() - m.metrics[1].Value.Float64()
	}
	for _, t := range threads {
		used := t.Seconds - m.threads[t.TID] // a new thread started from 0
		if used <= 0 {
			continue
		}
		b.Threads[t.Name] += used
		b.BusiestThreadSeconds = max(b.BusiestThreadSeconds, used)
	}
	if sw, ok := contextSwitches(); ok {
		b.VoluntarySwitches, b.InvoluntarySwitches = sw[0]-m.switches[0], sw[1]-m.switches[1]
	}
	return b
}

// contextSwitches is this process's voluntary and involuntary context
// switches so far.
func contextSwitches() ([2]int64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return [2]int64{}, false
	}
	return [2]int64{int64(ru.Nvcsw), int64(ru.Nivcsw)}, true
}
