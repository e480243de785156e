package reports

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"

	"github.com/provebench/provebench/gpu/catalog"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/provebench/provebench/results"
)

// lighten mixes a colour with white, for filled areas under their outline.
func lighten(c color.Color, f float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(float64(v>>8) + (255-float64(v>>8))*f) }
	return color.RGBA{mix(r), mix(g), mix(b), 255}
}

// seriesLine is one column of a series, ready to draw.
type seriesLine struct {
	label string
	ys    []float64
	style draw.LineStyle
}

// classifySeries sorts a repetition's counter columns into the timeline's
// panels (see panelOf), each panel in glossary order and then by name.
// live names the counters the run reports a final value for. Columns that
// stay at zero are left out: they would only crowd the legend.
func classifySeries(s *results.Series, live map[string]bool) map[panelKind][]seriesLine {
	rank := func(name string) int {
		for i, c := range glossary {
			if c.name == name {
				return i
			}
		}
		return len(glossary)
	}
	names := slices.Sorted(maps.Keys(s.Counters))
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	out := map[panelKind][]seriesLine{}
	for _, k := range names {
		col := s.Counters[k]
		if allZero(col) {
			continue
		}
		p := panelOf(k, col, live)
		out[p] = append(out[p], seriesLine{label: k, ys: ints(col), style: counterStyle(k)})
	}
	return out
}

// timelineAxes are the axes the timelines of one run share, so that they
// can be read side by side: one time range, one memory scale, and per
// panel one upper bound.
type timelineAxes struct {
	tmin, tmax float64
	max        map[panelKind]float64 // data maximum per panel (bytes or counts)
}

// timelineSubject is a repetition to draw and what the timeline needs to
// know of its configuration.
type timelineSubject struct {
	rep   *results.Repetition
	limit float64 // the memory limit, 0 for none
	// hostBackend is true for a backend that proves on the host (the CPU
	// backend, gpu/catalog.OnHost), whose "device" memory is host memory:
	// part of RSS, so part of the account.
	hostBackend bool
}

// subjectOf is the repetition r of sc as a timeline draws it: its series
// thinned to what a plot can show (thinSeries), so that an hour sampled
// every 10 ms costs the report no more than a minute.
func subjectOf(sc *results.Scenario, r *results.Repetition) timelineSubject {
	thin := *r
	thin.Series = thinSeries(r.Series, plotBuckets)
	return timelineSubject{rep: &thin, limit: memoryLimit(sc), hostBackend: catalog.OnHost(sc.Backend)}
}

// plotBuckets is how many stretches of time a drawn series is cut into:
// a timeline is some 1000 pixels wide, so more would not be seen.
const plotBuckets = 1000

// thinSeries keeps, of a series longer than 2*buckets samples, in each of
// buckets equal stretches of its time axis, the samples where RSS is
// lowest and highest and where each other column peaks, in time order, and
// the first and last samples. Every peak a timeline shows survives (RSS,
// GPU memory, each counter), and a drawn line has at most a few thousand
// points whatever the run's length. Shorter series are returned as they
// are.
func thinSeries(s *results.Series, buckets int) *results.Series {
	if s == nil || len(s.T) <= 2*buckets {
		return s
	}
	n := len(s.T)
	keep := make([]int, 0, 4*buckets)
	t0, span := s.T[0], s.T[n-1]-s.T[0]
	for lo := 0; lo < n; {
		b := bucketOf(s.T[lo], t0, span, buckets)
		hi := lo + 1
		for hi < n && bucketOf(s.T[hi], t0, span, buckets) == b {
			hi++
		}
		keep = append(keep, bucketRows(s, lo, hi)...)
		lo = hi
	}
	keep = append(keep, 0, n-1)
	slices.Sort(keep)
	return pickRows(s, slices.Compact(keep))
}

// bucketOf is the stretch of time t falls in.
func bucketOf(t, t0, span float64, buckets int) int {
	if span <= 0 {
		return 0
	}
	return min(int((t-t0)/span*float64(buckets)), buckets-1)
}

// bucketRows are the rows of s[lo:hi] that a thinned series keeps: RSS's
// lowest and highest, and every other column's highest.
func bucketRows(s *results.Series, lo, hi int) []int {
	rows := []int{argBest(lo, hi, func(i, j int) bool { return s.RSSBytes[i] < s.RSSBytes[j] }),
		argBest(lo, hi, func(i, j int) bool { return s.RSSBytes[i] > s.RSSBytes[j] })}
	for _, col := range [][]*uint64{s.GPUMemoryBytes, s.GPUDeviceMemoryBytes} {
		if len(col) == len(s.T) {
			rows = append(rows, argBest(lo, hi, func(i, j int) bool { return col[i] != nil && (col[j] == nil || *col[i] > *col[j]) }))
		}
	}
	for _, col := range s.Counters {
		if len(col) == len(s.T) {
			rows = append(rows, argBest(lo, hi, func(i, j int) bool { return col[i] > col[j] }))
		}
	}
	return rows
}

// argBest is the first index of [lo, hi) that no later one beats.
func argBest(lo, hi int, better func(i, j int) bool) int {
	best := lo
	for i := lo + 1; i < hi; i++ {
		if better(i, best) {
			best = i
		}
	}
	return best
}

// pickRows is the series of s's rows at the given indexes.
func pickRows(s *results.Series, rows []int) *results.Series {
	out := &results.Series{IntervalSeconds: s.IntervalSeconds, Counters: make(map[string][]int64, len(s.Counters))}
	out.T = pick(s.T, rows)
	out.RSSBytes = pick(s.RSSBytes, rows)
	out.GPUMemoryBytes = pick(s.GPUMemoryBytes, rows)
	out.GPUDeviceMemoryBytes = pick(s.GPUDeviceMemoryBytes, rows)
	out.GPUUtilization = pick(s.GPUUtilization, rows)
	for name, col := range s.Counters {
		out.Counters[name] = pick(col, rows)
	}
	return out
}

// pick is col's values at rows; nil for a column absent or not as long as
// the time axis (which the validator refuses, and the plots leave out).
func pick[V any](col []V, rows []int) []V {
	if len(col) == 0 || rows[len(rows)-1] >= len(col) {
		return nil
	}
	out := make([]V, len(rows))
	for k, i := range rows {
		out[k] = col[i]
	}
	return out
}

// sharedAxes spans every repetition drawn. The time range is that of the
// measured repetitions: one stopped early keeps its own (see
// timelineFigure), or a failure in the first second of a run whose others
// took a minute would be a sliver.
func sharedAxes(subjects []timelineSubject, live map[string]bool) timelineAxes {
	ax := timelineAxes{tmin: math.Inf(1), tmax: math.Inf(-1), max: map[panelKind]float64{}}
	for _, sub := range subjects {
		s := sub.rep.Series
		if sub.rep.Measured() {
			ax.tmin, ax.tmax = math.Min(ax.tmin, s.T[0]), math.Max(ax.tmax, s.T[len(s.T)-1])
		}
		stack, lines := memoryLines(s, live, sub.hostBackend)
		ax.max[panelMemory] = math.Max(ax.max[panelMemory], maxOf(stackedTop(stack)))
		for _, l := range lines {
			ax.max[panelMemory] = math.Max(ax.max[panelMemory], maxOf(l.ys))
		}
		if limitShown(sub.rep, sub.limit, ax.max[panelMemory]) {
			ax.max[panelMemory] = math.Max(ax.max[panelMemory], sub.limit)
		}
		for p, lines := range classifySeries(s, live) {
			if p == panelMemory {
				continue
			}
			if p == panelStages { // stacked: the sum is what is drawn
				ax.max[p] = math.Max(ax.max[p], maxOf(stackedTop(lines)))
				continue
			}
			for _, l := range lines {
				ax.max[p] = math.Max(ax.max[p], maxOf(l.ys))
			}
		}
	}
	ax.tmin = math.Min(ax.tmin, 0) // the pipeline's start is always on the axis
	return ax
}

// limitShown tells whether a timeline draws the scenario's memory limit:
// always for a repetition the limit stopped, else when it is near enough
// to the data to be read (a 2 GiB guard above a 60 MiB run would only
// flatten the plot).
func limitShown(r *results.Repetition, limit, dataMax float64) bool {
	return limit > 0 && (r.Status == results.StatusMemoryLimit || limit <= 1.5*dataMax)
}

// memoryLimit reads the scenario's memory limit from its spec (0: none,
// or a spec that does not decode, which only costs the plot its line).
func memoryLimit(sc *results.Scenario) float64 {
	v, err := sc.DecodeSpec()
	if err != nil {
		return 0
	}
	return float64(v.MemoryLimit)
}

// memoryLines are the memory panel's series: the RSS account stacked
// bottom up (key, datasets, the CPU backend's buffers, Go runtime, the
// rest up to RSS), then RSS and the GPU's memory as lines. A document
// without the account's series (written before they were sampled) draws
// RSS alone.
func memoryLines(s *results.Series, live map[string]bool, hostBackend bool) (stack, lines []seriesLine) {
	rss := uints(s.RSSBytes)
	panels := classifySeries(s, live)
	for _, l := range panels[panelMemory] {
		stack = append(stack, l)
		if l.label != "dataset_bytes" || !hostBackend {
			continue
		}
		for _, b := range panels[panelBytes] {
			if b.label == "device_memory_bytes" {
				b.label = "device_memory_bytes (CPU backend: host)"
				stack = append(stack, b)
			}
		}
	}
	if len(stack) > 0 {
		rest := slices.Clone(rss)
		for j := range rest {
			for _, l := range stack {
				if j < len(l.ys) {
					rest[j] -= l.ys[j]
				}
			}
			rest[j] = math.Max(rest[j], 0)
		}
		stack = append(stack, seriesLine{label: "rest of RSS", ys: rest, style: draw.LineStyle{Color: color.Gray{Y: 150}, Width: vg.Points(0.8)}})
	}
	out := []seriesLine{{label: "RSS", ys: rss, style: draw.LineStyle{Color: color.Black, Width: vg.Points(1.6)}}}
	if len(s.GPUMemoryBytes) > 0 {
		out = append(out, seriesLine{label: "GPU memory (process)", ys: optUints(s.GPUMemoryBytes), style: draw.LineStyle{Color: color.RGBA{118, 185, 0, 255}, Width: vg.Points(1.5)}})
	}
	if len(s.GPUDeviceMemoryBytes) > 0 {
		out = append(out, seriesLine{label: "GPU memory (device)", ys: optUints(s.GPUDeviceMemoryBytes), style: draw.LineStyle{Color: color.RGBA{118, 185, 0, 255}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}})
	}
	return stack, out
}

// stackedTop sums the columns of a stack.
func stackedTop(lines []seriesLine) []float64 {
	var top []float64
	for _, l := range lines {
		for j, v := range l.ys {
			if j >= len(top) {
				top = append(top, 0)
			}
			top[j] += v
		}
	}
	return top
}

// timelineFigure draws one repetition's series as stacked panels on the
// run's shared axes: memory (the RSS account stacked: key, datasets, Go
// runtime, the rest; RSS and GPU memory as lines; the memory limit), the
// byte counters, the partitions at each pipeline stage (stacked), the
// other live counters and the cumulative counts. Counters are step lines:
// they change in whole steps between samples. A dashed grey line marks
// t = 0, the pipeline's start; a red one the moment a repetition that did
// not finish was stopped.
func timelineFigure(name, title string, sub timelineSubject, live map[string]bool, ax timelineAxes) (figure, bool) {
	r, limit := sub.rep, sub.limit
	s := r.Series
	if s == nil || len(s.T) == 0 {
		return figure{}, false
	}
	if !r.Measured() || math.IsInf(ax.tmin, 0) {
		ax.tmin, ax.tmax = math.Min(s.T[0], 0), s.T[len(s.T)-1] // its own time range
		if r.Status != results.StatusOK {
			ax.tmax += 0.03 * (ax.tmax - ax.tmin) // room to see the stop
		}
	}
	tl := &timeline{s: s, ax: ax}
	if r.Status != results.StatusOK {
		tl.stopped, tl.stopLabel = s.T[len(s.T)-1], "stopped: "+string(r.Status)
	}
	panels := classifySeries(s, live)
	stack, lines := memoryLines(s, live, sub.hostBackend)
	tl.memory(stack, lines, limit, limitShown(r, limit, ax.max[panelMemory]))
	tl.panel(panelBytes, "live bytes", panels[panelBytes], true, false)
	tl.panel(panelStages, "partitions by stage", panels[panelStages], false, true)
	tl.panel(panelCounts, "live counts", panels[panelCounts], false, false)
	tl.panel(panelEvents, "events so far", panels[panelEvents], false, false)
	tl.panel(panelGC, "Go GC cycles", panels[panelGC], false, false)

	xlabel := "time since pipeline start (s)"
	if ax.tmin < 0 {
		xlabel += "; shaded: setup before the clock started (key, device, warm-up)"
	}
	tl.plots[len(tl.plots)-1].X.Label.Text = xlabel
	grid := make([][]*plot.Plot, len(tl.plots))
	for i, p := range tl.plots {
		grid[i] = []*plot.Plot{p}
		p.X.Tick.Marker = plot.TickerFunc(niceTicks)
	}
	h := vg.Length(len(tl.plots))*1.9*vg.Inch + 0.8*vg.Inch
	return figure{name: name, w: 9 * vg.Inch, h: h, draw: layout{title: title, grid: grid, legends: tl.legends}.draw}, true
}

// timeline builds a timeline's panels.
type timeline struct {
	s         *results.Series
	ax        timelineAxes
	stopped   float64 // when the repetition was stopped; only with stopLabel
	stopLabel string
	plots     []*plot.Plot
	legends   []*sideLegend
}

// newPanel starts a panel on the shared time axis with y from 0 to ymax.
func (tl *timeline) newPanel(ylabel string, ymax float64) (*plot.Plot, *sideLegend) {
	p := newPlot("", "", ylabel)
	p.X.Min, p.X.Max = tl.ax.tmin, tl.ax.tmax
	p.Y.Min, p.Y.Max = 0, math.Max(ymax*1.04, 1)
	if tl.ax.tmin < 0 {
		// The setup before the clock started (key, device, warm-up),
		// shaded under everything drawn later: measured apart, not part
		// of the run's figures.
		if shade, err := plotter.NewPolygon(plotter.XYs{
			{X: tl.ax.tmin, Y: p.Y.Min}, {X: 0, Y: p.Y.Min}, {X: 0, Y: p.Y.Max}, {X: tl.ax.tmin, Y: p.Y.Max},
		}); err == nil {
			shade.Color = color.Gray{Y: 236}
			shade.LineStyle.Width = 0
			p.Add(shade)
		}
	}
	return p, newSideLegend(vg.Points(9))
}

// line turns a column into a drawable line, skipping values that are not
// numbers.
func (tl *timeline) line(l seriesLine, div float64, step bool) *plotter.Line {
	xy := make(plotter.XYs, 0, len(tl.s.T))
	for j, t := range tl.s.T {
		if j < len(l.ys) && !math.IsNaN(l.ys[j]) && !math.IsInf(l.ys[j], 0) {
			xy = append(xy, plotter.XY{X: t, Y: l.ys[j] / div})
		}
	}
	if len(xy) == 0 {
		return nil
	}
	pl, err := plotter.NewLine(xy)
	if err != nil {
		return nil
	}
	pl.LineStyle = l.style
	if step {
		pl.StepStyle = plotter.PostStep
	}
	return pl
}

// marks adds the pipeline's start and the moment of stopping.
func (tl *timeline) marks(p *plot.Plot, legend *sideLegend, first bool) {
	vline := func(x float64, sty draw.LineStyle) *plotter.Line {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return nil
		}
		l.LineStyle = sty
		return l
	}
	if tl.ax.tmin < 0 {
		if l := vline(0, draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}}); l != nil {
			p.Add(l)
		}
	}
	if tl.stopLabel != "" {
		if l := vline(tl.stopped, draw.LineStyle{Color: color.RGBA{200, 0, 0, 255}, Width: vg.Points(1.5)}); l != nil {
			p.Add(l)
			if first {
				legend.add(tl.stopLabel, l)
			}
		}
	}
}

// memory draws the memory panel: the RSS account as stacked bands, RSS
// and GPU memory as lines, and the memory limit.
func (tl *timeline) memory(stack, lines []seriesLine, limit float64, showLimit bool) {
	sc := byteScale(tl.ax.max[panelMemory])
	p, legend := tl.newPanel(fmt.Sprintf("memory (%s)", sc.unit), tl.ax.max[panelMemory]/sc.div)
	p.Y.Tick.Marker = plot.TickerFunc(niceTicks)
	// Bands: each drawn at the sum of itself and those below, topmost
	// first, so that each fill shows its own band.
	cum := make([]seriesLine, len(stack))
	for i, l := range stack {
		cum[i] = seriesLine{label: l.label, ys: stackedTop(stack[:i+1]), style: l.style}
	}
	bands := make([]*plotter.Line, len(cum))
	for i := len(cum) - 1; i >= 0; i-- {
		if pl := tl.line(cum[i], sc.div, false); pl != nil {
			pl.LineStyle.Width = vg.Points(0.5)
			pl.FillColor = lighten(cum[i].style.Color, 0.55)
			bands[i] = pl
			p.Add(pl)
		}
	}
	for _, l := range lines {
		if pl := tl.line(l, sc.div, false); pl != nil {
			p.Add(pl)
			legend.add(l.label, pl)
		}
	}
	for i := len(bands) - 1; i >= 0; i-- {
		if bands[i] != nil {
			legend.add(stack[i].label, bands[i])
		}
	}
	if showLimit {
		l, err := plotter.NewLine(plotter.XYs{{X: tl.ax.tmin, Y: limit / sc.div}, {X: tl.ax.tmax, Y: limit / sc.div}})
		if err == nil {
			l.LineStyle = draw.LineStyle{Color: color.RGBA{200, 0, 0, 255}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
			p.Add(l)
			legend.add("memory limit", l)
		}
	}
	tl.marks(p, legend, true)
	tl.plots, tl.legends = append(tl.plots, p), append(tl.legends, legend)
}

// panel draws one panel of counters (nothing when lines is empty).
func (tl *timeline) panel(kind panelKind, ylabel string, lines []seriesLine, bytes, stacked bool) {
	if len(lines) == 0 {
		return
	}
	sc := scale{1, ""}
	ymax := tl.ax.max[kind]
	p, legend := tl.newPanel(ylabel, ymax)
	if bytes {
		sc = byteScale(ymax)
		p.Y.Label.Text = fmt.Sprintf("%s (%s)", ylabel, sc.unit)
		p.Y.Max = math.Max(ymax/sc.div*1.04, 1)
		p.Y.Tick.Marker = plot.TickerFunc(niceTicks)
	} else {
		p.Y.Tick.Marker = plot.TickerFunc(integerTicks)
	}
	draws := lines
	if stacked {
		draws = make([]seriesLine, len(lines))
		for i, l := range lines {
			draws[i] = seriesLine{label: l.label, ys: stackedTop(lines[:i+1]), style: l.style}
		}
	}
	plotted := make([]*plotter.Line, len(draws))
	for i := len(draws) - 1; i >= 0; i-- {
		pl := tl.line(draws[i], sc.div, true)
		if pl == nil {
			continue
		}
		if stacked {
			pl.LineStyle.Width = vg.Points(0.8)
			pl.FillColor = lighten(pl.LineStyle.Color, 0.35)
		}
		plotted[i] = pl
		p.Add(pl)
	}
	// The legend reads top to bottom as a stack does.
	for i := range draws {
		j := i
		if stacked {
			j = len(draws) - 1 - i
		}
		if plotted[j] != nil {
			legend.add(draws[j].label, plotted[j])
		}
	}
	tl.marks(p, legend, false)
	tl.plots, tl.legends = append(tl.plots, p), append(tl.legends, legend)
}

// niceTicks marks round values, at a 1-2-5 step giving four to eight
// ticks, labelled without trailing zeros.
func niceTicks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) {
		return []plot.Tick{{Value: lo, Label: fmt.Sprint(lo)}}
	}
	mag := math.Pow(10, math.Floor(math.Log10(span/5)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; span/step <= 7 {
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		v = math.Round(v/step) * step
		ticks = append(ticks, plot.Tick{Value: v, Label: formatTick(v, step)})
	}
	return ticks
}

// formatTick writes v with as many decimals as the step needs.
func formatTick(v, step float64) string {
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if v == 0 {
		v = 0 // no "-0"
	}
	return fmt.Sprintf("%.*f", dec, v)
}

func allZero(v []int64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func nonDecreasing(v []int64) bool {
	for i := 1; i < len(v); i++ {
		if v[i] < v[i-1] {
			return false
		}
	}
	return true
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			m = math.Max(m, x)
		}
	}
	return m
}

func uints(v []uint64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// optUints is uints for a column with gaps (failed samples): a gap is NaN,
// which the panels leave undrawn.
func optUints(v []*uint64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.NaN()
		if x != nil {
			out[i] = float64(*x)
		}
	}
	return out
}

func ints(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
