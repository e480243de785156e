// Package reports turns a results document into pictures and documents:
// throughput against peak memory with the Pareto front, a side-by-side
// comparison of strategies, a memory-and-counters timeline per
// configuration (PNG and SVG, drawn with gonum/plot), a Markdown report
// linking the PNGs and an HTML page that shows the pictures beside it, or
// embeds them as SVG when asked to be self-contained.
//
// It reads results only: nothing here knows how the figures were measured.
package reports

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/provebench/provebench/internal/fsname"
	"github.com/provebench/provebench/results"
)

// Formats are the picture formats Generate can write.
var Formats = []string{"png", "svg"}

// Options configures Generate.
type Options struct {
	// Formats are the picture files to write, "png" and/or "svg"; empty
	// means both.
	Formats []string
	// SelfContained makes report.html one file with every plot inline as
	// SVG (to attach or mail; several MB for a large sweep). Otherwise it
	// references the picture files beside it, PNG when written.
	SelfContained bool
	// Title heads the report and the plots; empty means "provebench report".
	Title string
	// StrategyColours fixes the palette index of the strategies it names
	// (provebench passes pipeline/config's Registered().Colours()), so that a
	// strategy keeps its colour whatever else a run holds; the run's other
	// strategies follow, sorted.
	StrategyColours map[string]int
}

// Report file names inside the output directory.
const (
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// Generate writes the report of a run into dir (created if needed): the
// plots in the chosen formats, report.md and report.html. It returns the
// paths written. Everything is rendered before anything is written, and a
// failed write removes what this call wrote, so dir never holds half a
// report.
func Generate(run *results.Run, dir string, opts Options) ([]string, error) {
	return GenerateContext(context.Background(), run, dir, opts)
}

// GenerateContext is Generate that stops when ctx is done: between the
// figures it renders, and before it writes anything, so that an interrupt
// leaves dir as it was. It returns ctx's error then.
func GenerateContext(ctx context.Context, run *results.Run, dir string, opts Options) ([]string, error) {
	if err := checkRun(run); err != nil {
		return nil, err
	}
	formats, err := checkFormats(opts.Formats)
	if err != nil {
		return nil, err
	}
	title := opts.Title
	if title == "" {
		title = "provebench report"
	}
	sums := make([]*scenarioSummary, len(run.Scenarios))
	for i := range run.Scenarios {
		sums[i] = summarize(&run.Scenarios[i])
	}
	markLoadSkews(run, sums)
	timelineFiles := timelineNames(sums)
	figs := runFigures(plotTitle(run, title), sums, strategyOrder(sums, opts.StrategyColours))
	timelines, err := timelineFigures(ctx, sums, timelineFiles)
	if err != nil {
		return nil, err
	}
	pics, err := renderFigures(ctx, append(figs, timelines...), formats, opts.SelfContained)
	if err != nil {
		return nil, err
	}
	doc := buildDocument(run, title, sums, pics.rendered, timelineFiles)
	if err := pics.addDocument(doc, formats, opts.SelfContained); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // nothing written yet; from here on the writes run to the end
	}
	return writeAll(dir, pics.files)
}

// checkRun refuses a document with nothing to report.
func checkRun(run *results.Run) error {
	if run == nil {
		return errors.New("report: nil results")
	}
	if len(run.Scenarios) == 0 {
		return errors.New("report: the results have no scenarios: nothing to report")
	}
	return nil
}

// plotTitle is the plots' title: the report's, with the run's backends.
func plotTitle(run *results.Run, title string) string {
	if b := backends(run); b != "" {
		title += " (" + b + " backend)"
	}
	return title
}

// runFigures are the figures of the whole run, those it has data for:
// throughput against each memory axis, and the strategies side by side.
func runFigures(title string, sums []*scenarioSummary, order []string) []figure {
	var figs []figure
	for _, axis := range []memoryAxis{rssAxis, gpuAxis, datasetAxis} {
		if f, ok := throughputFigure(title, sums, order, axis); ok {
			figs = append(figs, f)
		}
	}
	if f, ok := strategiesFigure(title, sums, order); ok {
		figs = append(figs, f)
	}
	return figs
}

// timelineFigures are each configuration's timeline, and its first failed
// repetition's beside it. They share their axes (one time range, one
// memory scale), so they compare side by side.
func timelineFigures(ctx context.Context, sums []*scenarioSummary, timelineFiles map[string]string) ([]figure, error) {
	var drawn []timelineSubject
	live := map[string]bool{}
	for _, s := range sums {
		for _, r := range []*results.Repetition{s.timeline, s.failedTimeline} {
			if r != nil {
				drawn = append(drawn, subjectOf(s.sc, r))
			}
		}
		maps.Copy(live, s.live)
	}
	axes := sharedAxes(drawn, live)
	var figs []figure
	for _, s := range sums {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.timeline == nil {
			continue
		}
		if f, ok := timelineFigure(timelineFiles[s.sc.Name], timelineTitle(s), subjectOf(s.sc, s.timeline), live, axes); ok {
			figs = append(figs, f)
		}
		if r := s.failedTimeline; r != nil {
			t := fmt.Sprintf("%s: repetition %d (%s)", s.sc.Name, r.Index, r.Status)
			if f, ok := timelineFigure(timelineFiles[s.sc.Name]+"-failed", t, subjectOf(s.sc, r), live, axes); ok {
				figs = append(figs, f)
			}
		}
	}
	return figs, nil
}

// timelineTitle names a configuration's drawn repetition, and why it is
// the one drawn where that is not plain.
func timelineTitle(s *scenarioSummary) string {
	t := fmt.Sprintf("%s: repetition %d", s.sc.Name, s.timeline.Index)
	switch {
	case s.timeline.Status != results.StatusOK:
		t += " (" + string(s.timeline.Status) + ")"
	case len(s.measured) > 1:
		t += fmt.Sprintf(" (median throughput of %d)", len(s.measured))
	}
	return t
}

// renderedFigures are the report's files by name, before any is written,
// the figures' SVGs for a self-contained page, and the figures drawn.
type renderedFigures struct {
	files    map[string][]byte
	svgs     map[string][]byte
	rendered map[string]bool
}

// renderFigures draws each figure in every format asked for, and in SVG
// for a self-contained HTML page.
func renderFigures(ctx context.Context, figs []figure, formats []string, selfContained bool) (renderedFigures, error) {
	out := renderedFigures{files: map[string][]byte{}, svgs: map[string][]byte{}, rendered: map[string]bool{}}
	for _, f := range figs {
		if err := ctx.Err(); err != nil {
			return renderedFigures{}, err
		}
		for _, format := range renderFormats(formats, selfContained) {
			data, err := render(f, format)
			if err != nil {
				return renderedFigures{}, fmt.Errorf("report: %w", err)
			}
			if format == "svg" {
				out.svgs[f.name] = data
			}
			if slices.Contains(formats, format) {
				out.files[f.name+"."+format] = data
			}
		}
		out.rendered[f.name] = true
	}
	return out, nil
}

// addDocument renders the document as report.md and report.html beside
// the figures, the page embedding their SVGs when self-contained.
func (p *renderedFigures) addDocument(doc *document, formats []string, selfContained bool) error {
	md, err := doc.markdown(formats)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	svgs := p.svgs
	if !selfContained {
		svgs = nil
	}
	page, err := doc.html(svgs, pictureExt(formats))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	p.files[MarkdownFile] = md
	p.files[HTMLFile] = page
	return nil
}

func checkFormats(formats []string) ([]string, error) {
	if len(formats) == 0 {
		return slices.Clone(Formats), nil
	}
	var out []string
	for _, f := range formats {
		f = strings.ToLower(strings.TrimSpace(f))
		if !slices.Contains(Formats, f) {
			return nil, fmt.Errorf("report: format %q: want %s", f, strings.Join(Formats, " or "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// renderFormats are the formats to draw: those asked for, and SVG for a
// self-contained page.
func renderFormats(formats []string, selfContained bool) []string {
	if !selfContained || slices.Contains(formats, "svg") {
		return formats
	}
	return append(slices.Clone(formats), "svg")
}

// writeAll writes the files into dir, each atomically, in name order; on
// failure it removes the ones it wrote.
func writeAll(dir string, files map[string][]byte) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var written []string
	for _, name := range names {
		path := filepath.Join(dir, name)
		if err := results.WriteFile(path, files[name]); err != nil {
			for _, p := range written {
				os.Remove(p)
			}
			return nil, fmt.Errorf("report: %w", err)
		}
		written = append(written, path)
	}
	return written, nil
}

// timelineNames gives each scenario a file name for its timeline, safe on
// any file system and the same in every run: "timeline-<stem>" (see
// fsname.Stem; the counter only guards against a hash collision).
func timelineNames(sums []*scenarioSummary) map[string]string {
	out := map[string]string{}
	used := map[string]bool{}
	for _, s := range sums {
		base := "timeline-" + fsname.Stem(s.sc.Name)
		name := base
		for i := 2; used[name]; i++ {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		used[name] = true
		out[s.sc.Name] = name
	}
	return out
}

// backends lists the run's backends, as "cpu" or "cpu, cuda".
func backends(run *results.Run) string {
	var out []string
	for _, sc := range run.Scenarios {
		if sc.Backend != "" && !slices.Contains(out, sc.Backend) {
			out = append(out, sc.Backend)
		}
	}
	return strings.Join(out, ", ")
}
