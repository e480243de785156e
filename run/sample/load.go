package sample

import (
	"context"
	"fmt"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/load"

	"github.com/provebench/provebench/results"
)

// LoadMeter measures the host's load over an interval: the CPU time the
// hypervisor stole and the CPU time processes other than the measured ones
// used (differences of /proc/stat's counters, and of the measured
// processes' own CPU time, between Start and Stop), and the load average
// at Stop.
type LoadMeter struct {
	ctx context.Context
	// own reads the measured processes' CPU seconds so far; nil when the
	// meter does not know them (no neighbours' share then).
	own                func() (float64, bool)
	steal, busy, total float64
	ownAt              float64
	ok, ownOK          bool
}

// StartLoad begins measuring the host alone. A host without /proc/stat
// gives a meter that reports no steal.
func StartLoad(ctx context.Context) *LoadMeter { return StartLoadOf(ctx, nil) }

// StartLoadOf begins measuring the host's load around processes whose CPU
// time own reads (cumulative seconds), so that Stop can tell the
// neighbours' share (results.HostLoad.OthersCPUFraction) from theirs.
func StartLoadOf(ctx context.Context, own func() (float64, bool)) *LoadMeter {
	m := &LoadMeter{ctx: ctx, own: own}
	m.steal, m.busy, m.total, m.ok = cpuTimes(ctx)
	if own != nil {
		m.ownAt, m.ownOK = own()
	}
	return m
}

// Stop ends the interval and returns the host's load over it.
func (m *LoadMeter) Stop() (*results.HostLoad, error) {
	avg, err := load.AvgWithContext(m.ctx)
	if err != nil {
		return nil, fmt.Errorf("host load: %w", err)
	}
	h := &results.HostLoad{Load1: avg.Load1}
	steal, busy, total, ok := cpuTimes(m.ctx)
	if !ok || !m.ok || total <= m.total {
		return h, nil
	}
	h.StealFraction = max(0, (steal-m.steal)/(total-m.total))
	if m.own != nil && m.ownOK {
		if own, ok := m.own(); ok {
			// The kernel accounts both in clock ticks; a few ticks of
			// skew between the reads can make the difference slightly
			// negative on a quiet host.
			f := min(1, max(0, ((busy-m.busy)-(own-m.ownAt))/(total-m.total)))
			h.OthersCPUFraction = &f
		}
	}
	return h, nil
}

// cpuTimes returns the host's cumulative steal, busy and total CPU
// seconds. Busy is every state but idle, I/O wait and steal (the guest
// states are already counted in user time).
func cpuTimes(ctx context.Context) (steal, busy, total float64, ok bool) {
	t, err := cpu.TimesWithContext(ctx, false)
	if err != nil || len(t) == 0 {
		return 0, 0, 0, false
	}
	c := t[0]
	busy = c.User + c.Nice + c.System + c.Irq + c.Softirq
	total = busy + c.Idle + c.Iowait + c.Steal
	return c.Steal, busy, total, true
}
