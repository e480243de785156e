package ab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

// Two warm sides hold their provers at once: each side's worker keeps its
// proving key, its pool and its datasets resident between repetitions.
// Where the two together would not fit the host's memory or a GPU's, the
// second side's setup would swap, be killed or wait on the device with
// nothing said. ab then keeps one side warm at a time for that
// configuration: it measures a block of pairs' repetitions on the side that
// is warm, ends that side's process, starts the other side's and measures
// the same pairs there, in ABBA order of blocks (first, second, second,
// first), so that a drift of the host falls on both sides alike and each
// side's process is started once per two blocks.
//
// Whether they fit is decided first by the configurations' estimated peak
// RSS (Config.PeakRSS, the strategy's bound) against the host's memory,
// then by what the base side's first warm-up measured (its kernel peak
// RSS, its GPU memory) against the host's memory and the GPU's, as its
// document records them: the estimate only decides whether the first
// warm-ups may overlap, the measurement decides the pairs.

// fitShare is the share of the host's (or a GPU's) memory, in percent,
// that two warm sides may need together: the rest is left to the page
// cache the keys are read through, the kernel and the sampler.
const fitShare = 90

// fits reports whether two processes needing need bytes each fit in
// capacity; an unknown figure (0) fits.
func fits(need, capacity uint64) bool {
	return need == 0 || capacity == 0 || 2*need <= capacity/100*fitShare
}

// fitsByEstimate reports whether the configuration's estimated peak RSS,
// twice, fits the host's memory (Runner.HostMemory).
func (r *Runner) fitsByEstimate(cfg Config) bool {
	return cfg.PeakRSS <= 0 || fits(uint64(cfg.PeakRSS), r.HostMemory)
}

// tooBigForTwo says why two warm sides of what rep measured would not fit
// host bytes of memory (where 0, the host's recorded in env) or a GPU
// recorded in env; "" when they would.
func tooBigForTwo(host uint64, env results.Environment, rep *results.Repetition) string {
	if rep == nil || rep.Status != results.StatusOK {
		return ""
	}
	if host == 0 {
		host = env.MemoryBytes
	}
	if !fits(rep.PeakRSSBytes, host) {
		return fmt.Sprintf("two warm sides need 2 × %s of peak RSS, the host has %s",
			units.FormatBytes(int64(rep.PeakRSSBytes)), units.FormatBytes(int64(host)))
	}
	gpu := rep.PeakGPUMemoryBytes
	if gpu == nil {
		gpu = rep.PeakGPUDeviceMemoryBytes
	}
	for _, g := range env.GPUs {
		if gpu != nil && !fits(*gpu, g.MemoryBytes) {
			return fmt.Sprintf("two warm sides need 2 × %s of GPU memory, the GPU has %s",
				units.FormatBytes(int64(*gpu)), units.FormatBytes(int64(g.MemoryBytes)))
		}
	}
	return ""
}

// firstWarmups runs the first warm-up of both warm sides: at once where
// two fit by the estimate (warmTogether); otherwise the base side's alone,
// then the new side's beside it where the base's measured figures say two
// fit, or not at all, and the configuration is measured one side at a
// time (pairsAlone).
func (r *Runner) firstWarmups(ctx context.Context, sides [2]*side, cfg Config) error {
	if r.fitsByEstimate(cfg) {
		return r.warmTogether(ctx, sides, cfg.Name)
	}
	rep, err := r.repetition(ctx, sides[0], cfg.Name, 1, true)
	if err != nil {
		return err
	}
	if why := tooBigForTwo(r.HostMemory, sides[0].doc.Environment, rep); why != "" {
		r.setAlone(cfg.Name, why)
		// The base side's other warm-ups, while it is warm; the new
		// side's come as its first block begins.
		for k := 2; k <= cfg.Warmups; k++ {
			if _, err := r.repetition(ctx, sides[0], cfg.Name, k, true); err != nil {
				return err
			}
		}
		return nil
	}
	_, err = r.repetition(ctx, sides[1], cfg.Name, 1, true)
	return err
}

// setAlone records that a configuration keeps one side warm at a time,
// and why, and logs it.
func (r *Runner) setAlone(config, why string) {
	if r.alone == nil {
		r.alone = map[string]string{}
	}
	r.alone[config] = why
	r.logf("%s: one side warm at a time (%s): pairs run in blocks, each side's process ended before the other's starts", config, why)
}

// roundPairs is how many pairs --until-resolved adds to a configuration
// at a time: an ABBA round of 2, or 4 where the sides are warm one at a
// time, each switch of side paying a setup.
func (r *Runner) roundPairs(config string) int {
	if r.alone[config] != "" {
		return 4
	}
	return 2
}

// Notes says, a line per configuration, which configurations kept one
// side warm at a time and why, how many processes each side started for
// them, and how far apart one side's processes put the work's CPU time
// (processSpread, from the sides' documents base and cur); none when both
// sides stayed warm together.
func (r *Runner) Notes(base, cur *results.Run) []string {
	names := make([]string, 0, len(r.alone))
	for name := range r.alone {
		names = append(names, name)
	}
	slices.Sort(names)
	lines := make([]string, 0, len(names))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range names {
		lines = append(lines, fmt.Sprintf("%s: one side warm at a time (%s); processes started: base %d, new %d%s",
			name, r.alone[name], r.starts[[2]string{"base", name}], r.starts[[2]string{"new", name}],
			processSpread(name, base, cur)))
	}
	return lines
}

// processSpread says how far apart one side's processes put the work's
// CPU time, each process's median over the repetitions it measured: with
// one side warm at a time a side's repetitions come in blocks of one
// process each, so a figure that carries a process's own level (where
// its memory was placed, which cores it drew) differs block against
// block, and the pairs cannot judge it finer than that. "" where no side
// measured the configuration in two processes.
func processSpread(config string, base, cur *results.Run) string {
	cpu, ok := results.MetricNamed(results.CPUSeconds)
	if !ok {
		return ""
	}
	var parts []string
	widest := 0.0
	for _, side := range []struct {
		name string
		doc  *results.Run
	}{{"base", base}, {"new", cur}} {
		medians := processMedians(side.doc, config, cpu)
		if len(medians) < 2 {
			continue
		}
		lo, hi := slices.Min(medians), slices.Max(medians)
		if lo <= 0 {
			continue
		}
		widest = max(widest, hi/lo-1)
		parts = append(parts, fmt.Sprintf("%s %s-%s over %d", side.name, cpu.Unit.Format(lo), cpu.Unit.Format(hi), len(medians)))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("; each process's median %s: %s (up to %.1f%% apart: a threshold below that judges the processes, not the change)",
		cpu.Name, strings.Join(parts, ", "), 100*widest)
}

// processMedians is, for each process that measured the configuration in
// doc (Repetition.Worker's PID), the median of metric m over its measured
// repetitions.
func processMedians(doc *results.Run, config string, m results.Metric) []float64 {
	if doc == nil {
		return nil
	}
	byPID := map[int][]float64{}
	var order []int
	for i := range doc.Scenarios {
		sc := &doc.Scenarios[i]
		if sc.Name != config {
			continue
		}
		for _, rep := range sc.Measured() {
			v, ok := m.Value(rep)
			if !ok || rep.Worker == nil {
				continue
			}
			if _, seen := byPID[rep.Worker.PID]; !seen {
				order = append(order, rep.Worker.PID)
			}
			byPID[rep.Worker.PID] = append(byPID[rep.Worker.PID], v)
		}
	}
	medians := make([]float64, 0, len(order))
	for _, pid := range order {
		medians = append(medians, stats.Median(byPID[pid]))
	}
	return medians
}

// block is a run of one side's repetitions, pairs lo..hi.
type block struct {
	s      *side
	lo, hi int
}

// pairsAlone runs pairs from..to of a configuration whose sides are warm
// one at a time: the side already warm (else the base) measures the first
// half of the pairs, then the other side the first half and the second,
// then the first side the second half. No block starts after the
// deadline once the first has begun: the pairs in flight finish.
func (r *Runner) pairsAlone(ctx context.Context, sides [2]*side, cfg Config, from, to, total int, deadline time.Time) error {
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return nil
	}
	first, second := sides[0], sides[1]
	if second.warmFor == cfg.Name && first.warmFor != cfg.Name {
		first, second = second, first
	}
	mid := from + (to-from+1+1)/2 - 1
	got := map[int]*[2]*results.Repetition{}
	for _, b := range []block{{first, from, mid}, {second, from, mid}, {second, mid + 1, to}, {first, mid + 1, to}} {
		if b.lo > b.hi {
			continue
		}
		if err := r.warmAlone(ctx, sides, b.s, cfg); err != nil {
			return err
		}
		for i := b.lo; i <= b.hi; i++ {
			rep, err := r.repetition(ctx, b.s, cfg.Name, i, false)
			if err != nil {
				return err
			}
			pair := got[i]
			if pair == nil {
				pair = &[2]*results.Repetition{}
				got[i] = pair
			}
			pair[slices.Index(sides[:], b.s)] = rep
			if pair[0] != nil && pair[1] != nil {
				r.logPair(cfg.Name, i, total, *pair)
			}
		}
	}
	return nil
}

// warmAlone makes s the one warm side of a configuration: unless its
// process already serves it, the other side's process is ended first, so
// that its memory is free, and s's is started with the configuration's
// warm-ups (at least one: a side started again is warmed before it is
// measured, as at the start).
func (r *Runner) warmAlone(ctx context.Context, sides [2]*side, s *side, cfg Config) error {
	if s.warmFor == cfg.Name {
		return nil
	}
	for _, o := range sides {
		if o != s {
			o.closeServer()
		}
	}
	for k := 1; k <= max(cfg.Warmups, 1); k++ {
		if _, err := r.repetition(ctx, s, cfg.Name, k, true); err != nil {
			return err
		}
	}
	return nil
}
