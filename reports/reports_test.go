package reports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/provebench/provebench/internal/markdown"
	"github.com/provebench/provebench/results"
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
	for _, sh := range fixtureShapes {
		if sh.failRep >= 0 { // the failed repetition's own timeline
			want = append(want, timelineNames(summaries(run))[sh.name]+"-failed.png", timelineNames(summaries(run))[sh.name]+"-failed.svg")
		}
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
			if strings.HasPrefix(filepath.Base(f), "timeline") { // the others are as wide as their key needs
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
		for _, strat := range []string{"release", "hold", "budget", "pacer", "Pareto (beyond noise)", "points: medians"} {
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

	// By default the page shows the PNGs beside it, embedding nothing.
	if n := strings.Count(page, "<img src="); n != len(want)/2-1 || strings.Contains(page, "<svg") {
		t.Errorf("report.html references %d pictures (want %d) and embeds SVG %v", n, len(want)/2-1, strings.Contains(page, "<svg"))
	}
	for _, name := range timelineNames(summaries(run)) {
		if !strings.Contains(page, `<img src="`+name+`.png"`) {
			t.Errorf("report.html does not show %s.png", name)
		}
	}
	// Self-contained page: every plot inline, nothing fetched.
	selfDir := filepath.Join(t.TempDir(), "self")
	if _, err := Generate(run, selfDir, Options{Title: "ci scenarios", SelfContained: true}); err != nil {
		t.Fatal(err)
	}
	self := string(readFile(t, filepath.Join(selfDir, HTMLFile)))
	if n := strings.Count(self, "<svg"); n != len(want)/2-1 || strings.Contains(self, "<img") {
		t.Errorf("self-contained report.html embeds %d SVGs, want %d, and no <img>", n, len(want)/2-1)
	}
	// The failed repetition is drawn with the moment it was stopped, and
	// the glossary defines the counters the run recorded.
	failed := svgText(t, readFile(t, filepath.Join(dir, timelineNames(summaries(run))["release pw=4"]+"-failed.svg")))
	if !strings.Contains(failed, "stopped: memory-limit") {
		t.Error("the failed repetition's timeline does not mark when it was stopped")
	}
	if !strings.Contains(page, "Glossary of counters") || !strings.Contains(page, "the seed&#39;s pile-up") {
		t.Error("report.html lacks the glossary of counters")
	}
	for _, bad := range []string{"<img", "<link", "<script", "<?xml"} {
		if strings.Contains(self, bad) {
			t.Errorf("self-contained report.html contains %q", bad)
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
	checkPNG(t, gpu, 0)
	checkPNG(t, filepath.Join(dir, "strategies.png"), 0)

	page := string(readFile(t, filepath.Join(dir, HTMLFile)))
	if !strings.Contains(page, `<img src="throughput-gpu-memory.png"`) || !strings.Contains(page, "NVIDIA H200") {
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
		return &scenarioSummary{sc: &results.Scenario{Name: name}, rss: spreadOf([]float64{mem}), pps: spreadOf([]float64{pps})}
	}
	sums := []*scenarioSummary{
		mk("small-slow", 1, 1), mk("dominated", 3, 1.5), mk("mid", 2, 2), mk("big-fast", 4, 3), mk("big-slow", 5, 2.5),
	}
	on := paretoNames(sums)
	if !on["small-slow"] || !on["mid"] || !on["big-fast"] || on["dominated"] || on["big-slow"] || len(on) != 3 {
		t.Errorf("pareto names %v, want small-slow, mid, big-fast", on)
	}
}

// A configuration is ruled out only by one that beats it beyond the noise
// of the repetitions: overlapping ranges tell nothing, however the medians
// fall (two identical runs must mark the same set).
func TestParetoRespectsNoise(t *testing.T) {
	mk := func(name string, mem, pps []float64) *scenarioSummary {
		return &scenarioSummary{sc: &results.Scenario{Name: name}, rss: spreadOf(mem), pps: spreadOf(pps)}
	}
	const mib = 1 << 20
	sums := []*scenarioSummary{
		// The case: 0.4 MiB apart on RSS with overlapping ranges.
		mk("a", []float64{26.0 * mib, 26.3 * mib, 26.9 * mib}, []float64{9.0, 9.4, 9.8}),
		mk("b", []float64{26.4 * mib, 26.7 * mib, 27.1 * mib}, []float64{9.1, 9.5, 9.9}),
		// Slower beyond noise at the same memory: dominated.
		mk("slow", []float64{26.2 * mib, 26.5 * mib, 26.8 * mib}, []float64{5.0, 5.1, 5.3}),
		// Clearly more memory, throughput within noise: dominated.
		mk("fat", []float64{40 * mib, 41 * mib, 42 * mib}, []float64{9.2, 9.5, 9.7}),
		// Clearly faster at clearly more memory: a trade-off, on the set.
		mk("fast", []float64{40 * mib, 41 * mib, 42 * mib}, []float64{12.0, 12.2, 12.5}),
	}
	on := paretoNames(sums)
	for name, want := range map[string]bool{"a": true, "b": true, "slow": false, "fat": false, "fast": true} {
		if on[name] != want {
			t.Errorf("%s on the Pareto set: %v, want %v (set %v)", name, on[name], want, on)
		}
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

// hash8 is the hash fsname.Stem appends to a name it cannot spell.
func hash8(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:4])
}

func TestTimelineNamesUnique(t *testing.T) {
	sums := summaries(&results.Run{Scenarios: []results.Scenario{{Name: "Hold pw=4"}, {Name: "hold/pw=4"}, {Name: "???"}, {Name: "../../etc"}}})
	names := timelineNames(sums)
	want := map[string]string{"Hold pw=4": "timeline-hold-pw-4-" + hash8("Hold pw=4"), "hold/pw=4": "timeline-hold-pw-4-" + hash8("hold/pw=4"),
		"???": "timeline-scenario-" + hash8("???"), "../../etc": "timeline-etc-" + hash8("../../etc")}
	for k, v := range want {
		if names[k] != v {
			t.Errorf("timeline name of %q = %q, want %q", k, names[k], v)
		}
	}
}

func TestClassifySeries(t *testing.T) {
	s := &results.Series{T: []float64{0, 1, 2, 3}, Counters: map[string][]int64{
		"abc_bytes":           {0, 10, 5, 0},
		"dataset_bytes":       {0, 12, 6, 0},
		"go_runtime_bytes":    {5, 6, 6, 6},
		"waiting_send":        {0, 2, 1, 0},
		"synthesizing":        {1, 2, 1, 0},
		"on_gpu":              {0, 0, 0, 0}, // never used: left out
		"permits_held":        {1, 2, 2, 2},
		"proofs_in_flight":    {1, 1, 1, 1}, // never falls here, still live: the glossary says so
		"device_queued":       {0, 1, 0, 0},
		"partitions_done":     {0, 1, 3, 4},
		"device_busy_ms":      {0, 5, 9, 12},
		"go_gc_cycles":        {1, 2, 3, 4},
		"exec_widgets":        {0, 1, 2, 3}, // unknown, never falls, no final value: events
		"exec_gauge":          {0, 1, 0, 0}, // unknown, falls: a count
		"exec_resident_bytes": {1, 2, 3, 4},
	}}
	// No final values at all, as for a repetition killed at its memory
	// limit: known counters still land in their panels.
	panels := classifySeries(s, map[string]bool{})
	names := func(ls []seriesLine) (out []string) {
		for _, l := range ls {
			out = append(out, l.label)
		}
		return out
	}
	for _, tc := range []struct {
		panel panelKind
		want  []string
	}{
		{panelMemory, []string{"dataset_bytes", "go_runtime_bytes"}},
		{panelBytes, []string{"abc_bytes", "exec_resident_bytes"}},
		{panelStages, []string{"synthesizing", "waiting_send"}}, // pipeline order
		{panelCounts, []string{"proofs_in_flight", "permits_held", "device_queued", "exec_gauge"}},
		{panelEvents, []string{"partitions_done", "exec_widgets"}},
		{panelGC, []string{"go_gc_cycles"}},
	} {
		if got := names(panels[tc.panel]); !slices.Equal(got, tc.want) {
			t.Errorf("panel %d: %v, want %v", tc.panel, got, tc.want)
		}
	}
	// One colour per counter whatever else the series holds.
	if counterStyle("on_gpu").Color != counterStyle("on_gpu").Color || counterStyle("on_gpu").Color == counterStyle("finalizing").Color {
		t.Error("stage colours are not fixed and distinct")
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{0, 12.7, []string{"0", "2", "4", "6", "8", "10", "12"}},
		{-0.4, 3.1, []string{"0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"}},
		{0, 0.9, []string{"0.0", "0.2", "0.4", "0.6", "0.8"}},
		{47.8, 61, []string{"48", "50", "52", "54", "56", "58", "60"}},
	} {
		var got []string
		for _, tk := range niceTicks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("niceTicks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestNumericColumnsRightAligned(t *testing.T) {
	tb := &table{Header: []string{"Scenario", "partitions/s", "peak RSS", "Pareto"}, Rows: [][]string{
		{"hold", "0.83 (0.7–0.9)", "52.0 MiB", "yes"},
		{"budget", "n/a", "—", ""},
	}}
	if got := tb.NumericColumns(); !slices.Equal(got, []bool{false, true, true, false}) {
		t.Errorf("numeric columns %v", got)
	}
}

func summaries(run *results.Run) []*scenarioSummary {
	var out []*scenarioSummary
	for i := range run.Scenarios {
		out = append(out, summarize(&run.Scenarios[i]))
	}
	return out
}

func TestCellKeepsFiguresWhole(t *testing.T) {
	for in, want := range map[string]string{
		"0.574 (0.533–0.884)": `<span class="nw">0.574</span> <span class="nw">(0.533–0.884)</span>`,
		"60.8 MiB":            `<span class="nw">60.8 MiB</span>`,
		"<b>":                 `<span class="nw">&lt;b&gt;</span>`,
	} {
		if got := string(cellHTML(in)); got != want {
			t.Errorf("cellHTML(%q) = %s, want %s", in, got, want)
		}
	}
}

// Issue 32 item 14: a configuration's name reaches report.md as text
// wherever it is printed (tables, headings, figure captions): no markup of
// it (HTML, entities, a line of Markdown of its own) survives.
func TestReportEscapesConfigurationNames(t *testing.T) {
	shape := fixtureShapes[0]
	shape.name = "evil<img src=x onerror=alert(1)>&amp;\n# heading\n| x |"
	dir := t.TempDir()
	if _, err := Generate(fixtureRun(t, false, []fixtureShape{shape}), dir, Options{Formats: []string{"svg"}}); err != nil {
		t.Fatal(err)
	}
	md := string(readFile(t, filepath.Join(dir, MarkdownFile)))
	if n := strings.Count(md, "evil&lt;img src=x onerror=alert(1)&gt;&amp;amp;"); n < 2 {
		t.Errorf("report.md prints the escaped name %d times, want it in its tables and heading:\n%s", n, md)
	}
	for _, raw := range []string{"<img", "&amp;\n", "\n# heading", "\n\\# heading", "\n| x |", "\n\\| x \\|"} {
		if strings.Contains(md, raw) {
			t.Errorf("report.md holds %q of the configuration's name as markup:\n%s", raw, md)
		}
	}
}
