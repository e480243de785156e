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
// repetition.
func NewProgress(w io.Writer, terminal bool) Progress {
	return &lineProgress{w: w, terminal: terminal}
}

type lineProgress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	total    int
	done     int
	start    time.Time
	label    string
}

func (p *lineProgress) Begin(scenarios, reps int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.start = reps, time.Now()
	fmt.Fprintf(p.w, "running %d scenarios, %d repetitions (warm-ups included)\n", scenarios, reps)
}

func (p *lineProgress) RepetitionStart(spec *Spec, idx int, warmup bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kind := fmt.Sprintf("rep %d/%d", idx+1, spec.Repeats)
	if warmup {
		kind = fmt.Sprintf("warm-up %d/%d", idx+1, spec.Warmups)
	}
	p.label = fmt.Sprintf("[%d/%d] %s %s", p.done+1, p.total, spec.Name, kind)
}

func (p *lineProgress) Tick(spec *Spec, elapsed time.Duration, done int, rss uint64) {
	if !p.terminal {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	total := spec.Workload.Proofs * spec.Workload.Partitions
	fmt.Fprintf(p.w, "\r\033[K%s  %5.1fs  partitions %d/%d  RSS %s", p.label, elapsed.Seconds(), done, total, units.FormatBytes(int64(rss)))
}

func (p *lineProgress) RepetitionEnd(spec *Spec, rep *results.Repetition) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
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
	fmt.Fprintln(p.w, line)
}

func (p *lineProgress) Fail(scenario string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s: %v\n", scenario, err)
}
