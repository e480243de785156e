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
	// (provebench passes pipeline.Registered().Colours()), so that a
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
	if run == nil {
		return nil, errors.New("report: nil results")
	}
	if len(run.Scenarios) == 0 {
		return nil, errors.New("report: the results have no scenarios: nothing to report")
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
	plotTitle := title
	if b := backends(run); b != "" {
		plotTitle += " (" + b + " backend)"
	}

	// Figures, each rendered in every format asked for, and in SVG for a
	// self-contained HTML page.
	var figs []figure
	order := strategyOrder(sums, opts.StrategyColours)
	if f, ok := throughputFigure(plotTitle, sums, order, rssAxis); ok {
		figs = append(figs, f)
	}
	if f, ok := throughputFigure(plotTitle, sums, order, gpuAxis); ok {
		figs = append(figs, f)
	}
	if f, ok := throughputFigure(plotTitle, sums, order, datasetAxis); ok {
		figs = append(figs, f)
	}
	if f, ok := strategiesFigure(plotTitle, sums, order); ok {
		figs = append(figs, f)
	}
	timelineFiles := timelineNames(sums)
	// The timelines share their axes: one time range, one memory scale.
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
	for _, s := range sums {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.timeline == nil {
			continue
		}
		t := fmt.Sprintf("%s: repetition %d", s.sc.Name, s.timeline.Index)
		switch {
		case s.timeline.Status != results.StatusOK:
			t += " (" + string(s.timeline.Status) + ")"
		case len(s.measured) > 1:
			t += fmt.Sprintf(" (median throughput of %d)", len(s.measured))
		}
		if f, ok := timelineFigure(timelineFiles[s.sc.Name], t, subjectOf(s.sc, s.timeline), live, axes); ok {
			figs = append(figs, f)
		}
		if r := s.failedTimeline; r != nil {
			t := fmt.Sprintf("%s: repetition %d (%s)", s.sc.Name, r.Index, r.Status)
			if f, ok := timelineFigure(timelineFiles[s.sc.Name]+"-failed", t, subjectOf(s.sc, r), live, axes); ok {
				figs = append(figs, f)
			}
		}
	}
	files := map[string][]byte{}
	svgs := map[string][]byte{}
	rendered := map[string]bool{}
	for _, f := range figs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, format := range renderFormats(formats, opts.SelfContained) {
			data, err := render(f, format)
			if err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
			if format == "svg" {
				svgs[f.name] = data
			}
			if slices.Contains(formats, format) {
				files[f.name+"."+format] = data
			}
		}
		rendered[f.name] = true
	}

	doc := buildDocument(run, title, sums, rendered, timelineFiles)
	md, err := doc.markdown(formats)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if !opts.SelfContained {
		svgs = nil
	}
	page, err := doc.html(svgs, pictureExt(formats))
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	files[MarkdownFile] = md
	files[HTMLFile] = page
	if err := ctx.Err(); err != nil {
		return nil, err // nothing written yet; from here on the writes run to the end
	}
	return writeAll(dir, files)
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
