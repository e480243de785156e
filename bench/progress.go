package bench

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/internal/units"
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

// etaEstimate estimates the time left from finished repetitions: the
// current configuration's remaining ones at its own mean duration (key
// loading and child start included), the configurations after it at the
// mean over every repetition so far. It is wrong by as much as the
// configurations differ, and says nothing until one repetition finished.
type etaEstimate struct {
	all, cur    time.Duration // summed durations: every repetition, this configuration's
	nAll, nCur  int
	curScenario string
}

func (e *etaEstimate) finished(scenario string, d time.Duration) {
	if scenario != e.curScenario {
		e.curScenario, e.cur, e.nCur = scenario, 0, 0
	}
	e.all += d
	e.cur += d
	e.nAll++
	e.nCur++
}

// left estimates the time for curLeft more repetitions of the scenario
// and laterLeft of the ones after it; false before any finished.
func (e *etaEstimate) left(scenario string, curLeft, laterLeft int) (time.Duration, bool) {
	if e.nAll == 0 {
		return 0, false
	}
	meanAll := e.all / time.Duration(e.nAll)
	meanCur := meanAll
	if scenario == e.curScenario && e.nCur > 0 {
		meanCur = e.cur / time.Duration(e.nCur)
	}
	return time.Duration(curLeft)*meanCur + time.Duration(laterLeft)*meanAll, true
}

// formatLeft writes an estimate to the second ("2m10s left").
func formatLeft(d time.Duration) string {
	return fmt.Sprintf("~%s left", max(d, 0).Round(time.Second))
}

func (p *lineProgress) Begin(scenarios, reps int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = reps
	fmt.Fprintf(p.w, "running %d scenarios, %d repetitions (warm-ups included)\n", scenarios, reps)
}

func (p *lineProgress) RepetitionStart(spec *Spec, idx int, warmup bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kind := fmt.Sprintf("rep %d/%d", idx+1, spec.Repeats)
	pos := spec.Warmups + idx // repetitions of this configuration before this one
	if warmup {
		kind = fmt.Sprintf("warm-up %d/%d", idx+1, spec.Warmups)
		pos = idx
	}
	p.label = fmt.Sprintf("[%d/%d] %s %s", p.done+1, p.total, spec.Name, kind)
	p.repStart = p.now()
	curLeft := spec.Warmups + spec.Repeats - pos
	p.left = -1
	if d, ok := p.eta.left(spec.Name, curLeft, max(p.total-p.done-curLeft, 0)); ok {
		p.left = d
		p.leftAfter, _ = p.eta.left(spec.Name, curLeft-1, max(p.total-p.done-curLeft, 0))
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
	p.eta.finished(spec.Name, p.now().Sub(p.repStart))
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
		kind := spec.Warmups + spec.Repeats
		// This configuration's repetitions left: those after this one.
		curLeft := 0
		if rep.Warmup {
			curLeft = kind - rep.Index - 1
		} else {
			curLeft = spec.Repeats - rep.Index - 1
		}
		if d, ok := p.eta.left(spec.Name, curLeft, max(p.total-p.done-curLeft, 0)); ok {
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
