package run

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

// Progress is told what a run is doing. Implementations: NewProgress.
type Progress interface {
	Begin(scenarios, repetitions int)
	RepetitionStart(spec *Spec, idx int, warmup bool)
	// Tick is called a few times a second while a repetition runs.
	Tick(spec *Spec, elapsed time.Duration, partitionsDone int, rss uint64)
	RepetitionEnd(spec *Spec, rep *results.Repetition)
	Fail(scenario string, err error)
}

type nopProgress struct{}

func (nopProgress) Begin(int, int)                           {}
func (nopProgress) RepetitionStart(*Spec, int, bool)         {}
func (nopProgress) Tick(*Spec, time.Duration, int, uint64)   {}
func (nopProgress) RepetitionEnd(*Spec, *results.Repetition) {}
func (nopProgress) Fail(string, error)                       {}

// NewProgress reports to w: on a terminal, a status line redrawn in place
// while a repetition runs; elsewhere (CI logs), one plain line per
// repetition. Once a repetition has finished, lines carry an estimate of
// the time left for the whole run, as hyperfine shows.
func NewProgress(w io.Writer, terminal bool) Progress {
	return &lineProgress{w: w, terminal: terminal, now: time.Now}
}

type lineProgress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	now      func() time.Time
	total    int
	done     int
	label    string

	eta      etaEstimate
	repStart time.Time
	left     time.Duration // estimated at the current repetition's start; -1: unknown
	// leftAfter is the estimate for the repetitions after the current
	// one: the countdown does not fall below it when the current one runs
	// long.
	leftAfter time.Duration
}

// etaEstimate estimates the time left from finished repetitions: each
// configuration seen so far has its remaining repetitions at its own mean
// duration (key loading and child start included), the configurations not
// seen yet theirs at the mean over every repetition so far. It holds
// whichever order the repetitions run in (one configuration after another,
// or interleaved), is wrong by as much as the configurations differ, and
// says nothing until one repetition finished.
type etaEstimate struct {
	all     time.Duration // summed durations of every repetition
	nAll    int
	configs map[string]*configETA
}

// configETA is one configuration's share of the estimate.
type configETA struct {
	planned, done int // warm-ups included
	sum           time.Duration
}

// config returns spec's record, made on first sight.
func (e *etaEstimate) config(spec *Spec) *configETA {
	if e.configs == nil {
		e.configs = make(map[string]*configETA)
	}
	c, ok := e.configs[spec.Name]
	if !ok {
		c = &configETA{planned: spec.Warmups + spec.Repeats}
		e.configs[spec.Name] = c
	}
	return c
}

func (e *etaEstimate) finished(spec *Spec, d time.Duration) {
	c := e.config(spec)
	c.done++
	c.sum += d
	e.all += d
	e.nAll++
}

// mean is a configuration's mean duration, the overall one before any of
// its own finished.
func (e *etaEstimate) mean(c *configETA) time.Duration {
	if c.done > 0 {
		return c.sum / time.Duration(c.done)
	}
	return e.all / time.Duration(e.nAll)
}

// left estimates the time for the remaining repetitions of the run, which
// are not finished yet (the one running included); false before any
// finished.
func (e *etaEstimate) left(remaining int) (time.Duration, bool) {
	if e.nAll == 0 {
		return 0, false
	}
	var d time.Duration
	for _, c := range e.configs {
		n := max(c.planned-c.done, 0)
		d += time.Duration(n) * e.mean(c)
		remaining -= n
	}
	return d + time.Duration(max(remaining, 0))*(e.all/time.Duration(e.nAll)), true
}

// formatLeft writes an estimate to the second ("2m10s left").
func formatLeft(d time.Duration) string {
	return fmt.Sprintf("~%s left", max(d, 0).Round(time.Second))
}

func (p *lineProgress) Begin(scenarios, reps int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = reps
	fmt.Fprintf(p.w, "running %s, %s (warm-ups included)\n", units.Plural(scenarios, "scenario"), units.Plural(reps, "repetition"))
}

func (p *lineProgress) RepetitionStart(spec *Spec, idx int, warmup bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kind := fmt.Sprintf("rep %d/%d", idx+1, spec.Repeats)
	if warmup {
		kind = fmt.Sprintf("warm-up %d/%d", idx+1, spec.Warmups)
	}
	p.label = fmt.Sprintf("[%d/%d] %s %s", p.done+1, p.total, spec.Name, kind)
	p.repStart = p.now()
	cur := p.eta.config(spec)
	p.left = -1
	if d, ok := p.eta.left(p.total - p.done); ok {
		p.left = d
		p.leftAfter = max(d-p.eta.mean(cur), 0)
	}
}

func (p *lineProgress) Tick(spec *Spec, elapsed time.Duration, done int, rss uint64) {
	if !p.terminal {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	total := spec.Workload.Proofs * spec.Workload.Partitions
	line := fmt.Sprintf("%s  %5.1fs  partitions %d/%d  RSS %s", p.label, elapsed.Seconds(), done, total, units.FormatBytes(int64(rss)))
	if p.left >= 0 {
		line += "  " + formatLeft(max(p.left-p.now().Sub(p.repStart), p.leftAfter))
	}
	fmt.Fprint(p.w, "\r\033[K"+line)
}

func (p *lineProgress) RepetitionEnd(spec *Spec, rep *results.Repetition) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.eta.finished(spec, p.now().Sub(p.repStart))
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	line := fmt.Sprintf("%s  %s", p.label, rep.Status)
	if rep.Status == results.StatusOK {
		line += fmt.Sprintf("  %.2fs  %.2f partitions/s  %.2f s/proof  peak RSS %s",
			rep.WallSeconds, rep.PartitionsPerSecond, rep.SecondsPerProof, units.FormatBytes(int64(rep.PeakRSSBytes)))
	} else if rep.Error != "" {
		line += ": " + rep.Error
	}
	if p.done < p.total {
		if d, ok := p.eta.left(p.total - p.done); ok {
			line += "  (" + formatLeft(d) + ")"
		}
	}
	fmt.Fprintln(p.w, line)
}

func (p *lineProgress) Fail(scenario string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s: %v\n", scenario, err)
}
