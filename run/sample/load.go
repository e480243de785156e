package sample

import (
	"context"
	"fmt"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/load"

	"github.com/provebench/provebench/results"
)

// LoadMeter measures the host's load over an interval: the CPU time the
// hypervisor stole (a difference of /proc/stat's counters between Start
// and Stop) and the load average at Stop.
type LoadMeter struct {
	ctx          context.Context
	steal, total float64
	ok           bool
}

// StartLoad begins measuring. A host without /proc/stat gives a meter that
// reports no steal.
func StartLoad(ctx context.Context) *LoadMeter {
	m := &LoadMeter{ctx: ctx}
	m.steal, m.total, m.ok = cpuTimes(ctx)
	return m
}

// Stop ends the interval and returns the host's load over it.
func (m *LoadMeter) Stop() (*results.HostLoad, error) {
	avg, err := load.AvgWithContext(m.ctx)
	if err != nil {
		return nil, fmt.Errorf("host load: %w", err)
	}
	h := &results.HostLoad{Load1: avg.Load1}
	if steal, total, ok := cpuTimes(m.ctx); ok && m.ok && total > m.total {
		h.StealFraction = max(0, (steal-m.steal)/(total-m.total))
	}
	return h, nil
}

// cpuTimes returns the host's cumulative steal and total CPU seconds.
func cpuTimes(ctx context.Context) (steal, total float64, ok bool) {
	t, err := cpu.TimesWithContext(ctx, false)
	if err != nil || len(t) == 0 {
		return 0, 0, false
	}
	return t[0].Steal, t[0].Total(), true
}
