package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"html"
	"image"
	_ "image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/internal/markdown"
)

// checkPNG decodes a PNG's header and checks its size is a plausible figure.
func checkPNG(t *testing.T, path string, wantWidth int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if format != "png" {
		t.Errorf("%s: format %s", path, format)
	}
	if wantWidth > 0 && cfg.Width != wantWidth {
		t.Errorf("%s: width %d, want %d", path, cfg.Width, wantWidth)
	}
	if cfg.Width < 400 || cfg.Width > 4000 || cfg.Height < 300 || cfg.Height > 6000 {
		t.Errorf("%s: %dx%d is not a sensible figure size", path, cfg.Width, cfg.Height)
	}
	if st, _ := f.Stat(); st.Size() < 10<<10 {
		t.Errorf("%s: %d bytes: too small to hold a plot", path, st.Size())
	}
}

// svgText parses an SVG as XML and returns its text content.
func svgText(t *testing.T, data []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var text strings.Builder
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse as XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			text.Write(tok)
			text.WriteByte('\n')
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return text.String()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGenerateCPURun(t *testing.T) {
	run := fixtureRun(t, false, fixtureShapes)
	dir := filepath.Join(t.TempDir(), "report")
	files, err := Generate(run, dir, Options{Title: "ci scenarios"})
	if err != nil {
		t.Fatal(err)
	}

	var want []string
	for _, base := range []string{"throughput-memory", "strategies"} {
		want = append(want, base+".png", base+".svg")
	}
	for _, name := range timelineNames(summaries(run)) {
		want = append(want, name+".png", name+".svg")
	}
	want = append(want, MarkdownFile, HTMLFile)
	var got []string
	for _, f := range files {
		if filepath.Dir(f) != dir {
			t.Errorf("%s written outside %s", f, dir)
		}
		got = append(got, filepath.Base(f))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("files written:\n%v\nwant:\n%v", got, want)
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "throughput-gpu") }) {
		t.Error("a GPU memory plot was drawn without NVML")
	}

	for _, f := range files {
		switch filepath.Ext(f) {
		case ".png":
			width := 0
			if strings.HasPrefix(filepath.Base(f), "throughput") || strings.HasPrefix(filepath.Base(f), "timeline") {
				width = 9 * pngDPI
			}
			checkPNG(t, f, width)
		case ".svg":
			svgText(t, readFile(t, f))
		}
	}

	// Every measured configuration is on the throughput and strategy plots.
	for _, plot := range []string{"throughput-memory.svg", "strategies.svg"} {
		text := svgText(t, readFile(t, filepath.Join(dir, plot)))
		for _, sc := range run.Scenarios {
			if !strings.Contains(text, sc.Name) {
				t.Errorf("%s lacks configuration %q", plot, sc.Name)
			}
		}
		for _, strat := range []string{"release", "hold", "budget", "pacer", "Pareto front"} {
			if plot == "throughput-memory.svg" && !strings.Contains(text, strat) {
				t.Errorf("%s legend lacks %q", plot, strat)
			}
		}
		if !strings.Contains(text, "MiB") {
			t.Errorf("%s: memory axis not in MiB for a run of ~200 MiB", plot)
		}
	}
	// The timeline has its three panels' labels.
	tl := svgText(t, readFile(t, filepath.Join(dir, timelineNames(summaries(run))["hold pw=4"]+".svg")))
	for _, want := range []string{"RSS", "abc_bytes", "synthesizing", "partitions by stage", "time since pipeline start (s)", "memory (MiB)"} {
		if !strings.Contains(tl, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}

	md := string(readFile(t, filepath.Join(dir, MarkdownFile)))
	page := string(readFile(t, filepath.Join(dir, HTMLFile)))
	for _, sc := range run.Scenarios {
		if !strings.Contains(md, markdown.Escape(sc.Name)) {
			t.Errorf("report.md lacks configuration %q", sc.Name)
		}
		if !strings.Contains(page, html.EscapeString(sc.Name)) {
			t.Errorf("report.html lacks configuration %q", sc.Name)
		}
	}
	for _, want := range []string{
		"![throughput against peak RSS](throughput-memory.png)", "(strategies.svg)",
		"NVML was absent", "memory-limit", "RSS 2", // the failed repetition and its error
		"NOT ZERO", // the failed repetition's counters are not measured; but see below
	} {
		if want == "NOT ZERO" {
			if strings.Contains(md, "| "+want) {
				t.Error("report.md flags counters not at zero, but every measured repetition balanced")
			}
			continue
		}
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// NVML absent: GPU cells read n/a, never 0.
	found := false
	for _, line := range strings.Split(md, "\n") {
		cells := strings.Split(line, " | ")
		if strings.HasPrefix(line, "| release pw=2 |") && len(cells) == 12 { // the summary table's row
			found = true
			if cells[7] != "n/a" {
				t.Errorf("peak GPU memory cell %q, want n/a: %s", cells[7], line)
			}
			if !strings.Contains(cells[2], "4 ok (+1 warm-up)") {
				t.Errorf("repetitions cell %q", cells[2])
			}
		}
	}

	if !found {
		t.Error("no summary row for release pw=2 in report.md")
	}

	// Self-contained page: every plot inline, nothing fetched.
	if n := strings.Count(page, "<svg"); n != len(want)/2-1 {
		t.Errorf("report.html embeds %d SVGs, want %d", n, len(want)/2-1)
	}
	for _, bad := range []string{"<img", "<link", "<script", "<?xml"} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
}

func TestGenerateGPURun(t *testing.T) {
	run := fixtureRun(t, true, fixtureShapes[:3])
	run.Scenarios[1].Repetitions[1].PeakRSSSource = results.PeakFromRusage
	dir := t.TempDir()
	files, err := Generate(run, dir, Options{Formats: []string{"PNG"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Ext(f) == ".svg" {
			t.Errorf("%s written though only png was asked for", f)
		}
	}
	gpu := filepath.Join(dir, "throughput-gpu-memory.png")
	checkPNG(t, gpu, 9*pngDPI)
	// Three panels side by side: throughput, RSS, GPU memory.
	checkPNG(t, filepath.Join(dir, "strategies.png"), 1296) // 3 panels of 3.6 in at pngDPI

	page := string(readFile(t, filepath.Join(dir, HTMLFile)))
	if !strings.Contains(page, "peak GPU memory (process, NVML)") || !strings.Contains(page, "NVIDIA H200") {
		t.Error("report.html lacks the GPU plot or the GPU's name")
	}
	md := string(readFile(t, filepath.Join(dir, MarkdownFile)))
	if strings.Contains(md, "NVML was absent") {
		t.Error("NVML present but the report says absent")
	}
	if !strings.Contains(md, "release pw=4: the kernel peak RSS of 1 measured repetition is wait4's ru\\_maxrss, an upper bound") {
		t.Error("report.md does not warn that a peak RSS is an upper bound")
	}
}

func TestGenerateSVGOnly(t *testing.T) {
	dir := t.TempDir()
	if _, err := Generate(fixtureRun(t, false, fixtureShapes[:2]), dir, Options{Formats: []string{"svg"}}); err != nil {
		t.Fatal(err)
	}
	md := string(readFile(t, filepath.Join(dir, MarkdownFile)))
	if !strings.Contains(md, "(throughput-memory.svg)") || strings.Contains(md, ".png") {
		t.Error("with svg only, report.md must link the SVGs")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.png")); len(m) > 0 {
		t.Errorf("PNG files written: %v", m)
	}
}

func TestGenerateBadInput(t *testing.T) {
	run := fixtureRun(t, false, fixtureShapes[:1])
	if _, err := Generate(run, t.TempDir(), Options{Formats: []string{"pdf"}}); err == nil || !strings.Contains(err.Error(), `"pdf"`) {
		t.Errorf("format pdf: %v", err)
	}
	if _, err := Generate(nil, t.TempDir(), Options{}); err == nil {
		t.Error("nil run accepted")
	}
	if _, err := Generate(&results.Run{Schema: 1, Tool: "provebench"}, t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "no scenarios") {
		t.Errorf("empty run: %v", err)
	}
	// The output path is a file: nothing can be written, nothing is.
	file := filepath.Join(t.TempDir(), "taken")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if files, err := Generate(run, filepath.Join(file, "report"), Options{}); err == nil || files != nil {
		t.Errorf("output under a file: %v, %v", files, err)
	}
}

func TestNoMeasuredRepetition(t *testing.T) {
	sh := fixtureShapes[0]
	sh.repeats, sh.failRep = 1, 0 // its only repetition hit the memory limit
	run := fixtureRun(t, false, []fixtureShape{sh, fixtureShapes[3]})
	dir := t.TempDir()
	if _, err := Generate(run, dir, Options{Formats: []string{"svg"}}); err != nil {
		t.Fatal(err)
	}
	md := string(readFile(t, filepath.Join(dir, MarkdownFile)))
	if !strings.Contains(md, "not plotted: release pw=2") {
		t.Errorf("report.md does not say the failed configuration is not plotted:\n%s", md)
	}
	// Its timeline is the failed repetition's, labelled as such.
	if !strings.Contains(md, "repetition 1 (memory-limit)") {
		t.Error("the failed repetition's timeline is not labelled with its status")
	}
}

func TestParetoFront(t *testing.T) {
	mk := func(name string, mem, pps float64) *scenarioSummary {
		return &scenarioSummary{sc: &results.Scenario{Name: name}, rss: spread{Median: mem, N: 1}, pps: spread{Median: pps, N: 1}}
	}
	sums := []*scenarioSummary{
		mk("small-slow", 1, 1), mk("dominated", 3, 1.5), mk("mid", 2, 2), mk("big-fast", 4, 3), mk("big-slow", 5, 2.5),
	}
	front := paretoFront(sums, rssAxis, scale{1, "B"})
	var got []float64
	for _, p := range front {
		got = append(got, p.X)
	}
	if !slices.Equal(got, []float64{1, 2, 4}) {
		t.Errorf("front at memory %v, want [1 2 4]", got)
	}
	on := paretoNames(sums)
	if !on["mid"] || on["dominated"] || on["big-slow"] {
		t.Errorf("pareto names %v", on)
	}
}

func TestRepresentativeIsMedian(t *testing.T) {
	series := &results.Series{T: []float64{0}, RSSBytes: []uint64{1}}
	sc := &results.Scenario{Repetitions: []results.Repetition{
		{Index: 0, Warmup: true, Status: results.StatusOK, PartitionsPerSecond: 100, Series: series},
		{Index: 1, Status: results.StatusOK, PartitionsPerSecond: 3, Series: series},
		{Index: 2, Status: results.StatusOK, PartitionsPerSecond: 1, Series: series},
		{Index: 3, Status: results.StatusOK, PartitionsPerSecond: 2, Series: series},
		{Index: 4, Status: results.StatusFailed, Series: series},
	}}
	s := summarize(sc)
	if s.timeline == nil || s.timeline.Index != 3 {
		t.Fatalf("representative %v, want repetition 3 (median throughput)", s.timeline)
	}
	if !strings.Contains(s.timelineWhy, "median by throughput of 3") {
		t.Errorf("why %q", s.timelineWhy)
	}
	if s.statuses != "3 ok, 1 failed (+1 warm-up)" {
		t.Errorf("statuses %q", s.statuses)
	}
}

func TestTimelineNamesUnique(t *testing.T) {
	sums := summaries(&results.Run{Scenarios: []results.Scenario{{Name: "Hold pw=4"}, {Name: "hold/pw=4"}, {Name: "???"}, {Name: "../../etc"}}})
	names := timelineNames(sums)
	want := map[string]string{"Hold pw=4": "timeline-hold-pw-4", "hold/pw=4": "timeline-hold-pw-4-2", "???": "timeline-scenario", "../../etc": "timeline-etc"}
	for k, v := range want {
		if names[k] != v {
			t.Errorf("timeline name of %q = %q, want %q", k, names[k], v)
		}
	}
}

func TestClassifySeries(t *testing.T) {
	s := &results.Series{T: []float64{0, 1, 2, 3}, Counters: map[string][]int64{
		"abc_bytes":       {0, 10, 5, 0},
		"waiting_send":    {0, 2, 1, 0},
		"synthesizing":    {1, 2, 1, 0},
		"on_gpu":          {0, 0, 0, 0}, // never used: left out
		"permits_held":    {1, 2, 2, 2}, // live (has a final value) though it never falls here
		"device_queued":   {0, 1, 0, 0}, // falls: a gauge
		"partitions_done": {0, 1, 3, 4}, // never falls, no final value: events
		"device_busy_ms":  {0, 5, 9, 12},
	}}
	bytes, stages, counts, events := classifySeries(s, map[string]bool{"abc_bytes": true, "waiting_send": true, "synthesizing": true, "on_gpu": true, "permits_held": true})
	names := func(ls []seriesLine) (out []string) {
		for _, l := range ls {
			out = append(out, l.label)
		}
		return out
	}
	for _, tc := range []struct {
		panel     string
		got, want []string
	}{
		{"bytes", names(bytes), []string{"abc_bytes"}},
		{"stages", names(stages), []string{"synthesizing", "waiting_send"}}, // pipeline order
		{"counts", names(counts), []string{"device_queued", "permits_held"}},
		{"events", names(events), []string{"partitions_done"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s panel: %v, want %v", tc.panel, tc.got, tc.want)
		}
	}
}

func summaries(run *results.Run) []*scenarioSummary {
	var out []*scenarioSummary
	for i := range run.Scenarios {
		out = append(out, summarize(&run.Scenarios[i]))
	}
	return out
}
