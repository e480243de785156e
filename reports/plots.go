package reports

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/results"
)

// pngDPI makes a 9 in wide figure 1080 px: sharp on a laptop screen and
// still small files.
const pngDPI = 120

// figure is one picture: its file name (without extension), size and how
// to draw it.
type figure struct {
	name string
	w, h vg.Length
	draw func(dc draw.Canvas)
}

// render draws a figure in a format ("png" or "svg"). gonum/plot panics on
// some degenerate data; a panic becomes an error naming the figure.
func render(f figure, format string) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("render %s.%s: %v", f.name, format, p)
		}
	}()
	var buf bytes.Buffer
	switch format {
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
		f.draw(draw.New(c))
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("encode %s.png: %w", f.name, err)
		}
	case "svg":
		c := vgsvg.New(f.w, f.h)
		f.draw(draw.New(c))
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("encode %s.svg: %w", f.name, err)
		}
	default:
		return nil, fmt.Errorf("unknown format %q", format)
	}
	return buf.Bytes(), nil
}

// palette is the strategy colours: the dark set reads on white and in
// print better than gonum's soft default.
var palette = plotutil.DarkColors

func strategyColor(i int) color.Color { return palette[i%len(palette)] }

// scale is a unit for an axis: bytes are shown in the binary unit that
// keeps the largest value readable (GiB for real proving sizes, MiB for
// the small ones CI runs).
type scale struct {
	div  float64
	unit string
}

func byteScale(maxBytes float64) scale {
	div, unit := units.ByteScale(maxBytes)
	return scale{div, unit}
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Title.Padding = vg.Points(6)
	p.Add(plotter.NewGrid())
	return p
}

// memoryAxis selects which peak memory a throughput plot is drawn against.
// label is a metric's name for people, as an axis or a panel names it;
// labelWithUnit adds its unit: "throughput (partitions/s)".
func label(metric string) string { return results.MetricOf(metric).Label }

func labelWithUnit(metric string) string {
	m := results.MetricOf(metric)
	return fmt.Sprintf("%s (%s)", m.Label, m.Unit)
}

type memoryAxis struct {
	file  string
	title string
	get   func(s *scenarioSummary) spread
}

var (
	rssAxis     = memoryAxis{"throughput-memory", label(results.PeakRSSBytes) + " (kernel VmHWM)", func(s *scenarioSummary) spread { return s.rss }}
	gpuAxis     = memoryAxis{"throughput-gpu-memory", label(results.PeakGPUMemoryBytes) + " (process, NVML)", func(s *scenarioSummary) spread { return s.gpu }}
	datasetAxis = memoryAxis{"throughput-dataset", "peak dataset bytes (dataset_bytes, exact)", func(s *scenarioSummary) spread { return s.dataset }}
)

// throughputFigure plots throughput against peak memory: one point per
// configuration at its medians, bars spanning min to max over the
// repetitions, colour and marker by strategy, a label beside each point,
// and the Pareto set (see paretoSet) ringed and joined by a dashed line.
// An axis zoomed to the data says where it starts.
func throughputFigure(title string, sums []*scenarioSummary, order []string, axis memoryAxis) (figure, bool) {
	var pts []*scenarioSummary
	for _, s := range sums {
		if s.pps.ok() && axis.get(s).ok() {
			pts = append(pts, s)
		}
	}
	if len(pts) == 0 {
		return figure{}, false
	}
	maxMem := 0.0
	for _, s := range pts {
		maxMem = math.Max(maxMem, axis.get(s).Max)
	}
	sc := byteScale(maxMem)
	labels := pointLabels(sums)

	p := newPlot("", fmt.Sprintf("%s (%s)", axis.title, sc.unit), labelWithUnit(results.PartitionsPerSecond))
	legend := newSideLegend(vg.Points(10))
	names := addMedianPoints(p, legend, pts, order, axis, sc, labels)
	addParetoSet(p, legend, pts, axis, sc)
	if l, err := plotter.NewLabels(names); err == nil {
		for i := range l.TextStyle {
			l.TextStyle[i].Font.Size = vg.Points(8)
		}
		l.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(3)}
		p.Add(l)
	}
	padAxis(&p.X)
	padAxis(&p.Y)
	p.X.Tick.Marker = plot.TickerFunc(niceTicks)
	p.Y.Tick.Marker = plot.TickerFunc(niceTicks)
	noteZoom(&p.X, sc.unit)
	noteZoom(&p.Y, string(results.MetricOf(results.PartitionsPerSecond).Unit))
	legend.add("", nil)
	legend.add("points: medians", nil)
	legend.add("bars: min–max of", nil)
	legend.add("  the repetitions", nil)
	labels.addKey(legend)
	if anyLoadSkew(sums) {
		legend.add("", nil)
		legend.add("(load!): its host load", nil)
		legend.add("  differed (report)", nil)
	}
	lo := layout{title: title + ": throughput vs " + axis.title, grid: [][]*plot.Plot{{p}}, legends: []*sideLegend{legend}}
	w := 6.8*vg.Inch + legend.width()
	return figure{name: axis.file, w: w, h: 6 * vg.Inch, draw: lo.draw}, true
}

// addMedianPoints draws each configuration at its medians with min–max
// bars, colour and marker by strategy, and returns the points' labels.
func addMedianPoints(p *plot.Plot, legend *sideLegend, pts []*scenarioSummary, order []string, axis memoryAxis, sc scale, labels shortNames) plotter.XYLabels {
	var names plotter.XYLabels
	for _, strat := range order {
		var xy plotter.XYs
		var xerr plotter.XErrors
		var yerr plotter.YErrors
		for _, s := range pts {
			if s.sc.Strategy != strat {
				continue
			}
			m := axis.get(s)
			xy = append(xy, plotter.XY{X: m.Median / sc.div, Y: s.pps.Median})
			xerr = append(xerr, struct{ Low, High float64 }{(m.Median - m.Min) / sc.div, (m.Max - m.Median) / sc.div})
			yerr = append(yerr, struct{ Low, High float64 }{s.pps.Median - s.pps.Min, s.pps.Max - s.pps.Median})
			names.XYs = append(names.XYs, xy[len(xy)-1])
			names.Labels = append(names.Labels, labels.short[s.sc.Name])
		}
		if len(xy) == 0 {
			continue
		}
		idx := strategyIndex(strat, order)
		clr := strategyColor(idx)
		scatter, err := plotter.NewScatter(xy)
		if err != nil {
			continue
		}
		scatter.GlyphStyle = draw.GlyphStyle{Color: clr, Radius: vg.Points(4), Shape: plotutil.Shape(idx)}
		xb := &plotter.XErrorBars{XYs: xy, XErrors: xerr, LineStyle: draw.LineStyle{Color: clr, Width: vg.Points(1)}, CapWidth: vg.Points(4)}
		yb := &plotter.YErrorBars{XYs: xy, YErrors: yerr, LineStyle: draw.LineStyle{Color: clr, Width: vg.Points(1)}, CapWidth: vg.Points(4)}
		p.Add(xb, yb, scatter)
		legend.add(strat, scatter)
	}
	return names
}

// addParetoSet rings the Pareto set's points and joins them, in order of
// memory, with a dashed line.
func addParetoSet(p *plot.Plot, legend *sideLegend, pts []*scenarioSummary, axis memoryAxis, sc scale) {
	on := paretoSet(pts, axis)
	var front plotter.XYs
	for _, s := range pts {
		if on[s.sc.Name] {
			front = append(front, plotter.XY{X: axis.get(s).Median / sc.div, Y: s.pps.Median})
		}
	}
	slices.SortFunc(front, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	rings, err := plotter.NewScatter(front)
	if err != nil || len(front) == 0 {
		return
	}
	rings.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 60}, Radius: vg.Points(8), Shape: draw.RingGlyph{}}
	p.Add(rings)
	if len(front) > 1 {
		if line, err := plotter.NewLine(front); err == nil {
			line.LineStyle = draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			p.Add(line)
		}
	}
	legend.add("Pareto (beyond noise)", rings)
}

// padAxis widens an axis by 6% of its span on each side (at least 0 below
// when the data are not negative), so that points and their labels are
// not cut at the frame.
func padAxis(a *plot.Axis) {
	span := a.Max - a.Min
	if span <= 0 {
		span = math.Max(math.Abs(a.Max), 1) * 0.2
	}
	lo := a.Min - 0.06*span
	if a.Min >= 0 {
		lo = math.Max(lo, 0)
	}
	a.Min, a.Max = lo, a.Max+0.06*span
}

// noteZoom says in an axis' label that it does not start at zero, so that
// a gap between two points is not read as a large one.
func noteZoom(a *plot.Axis, unit string) {
	if a.Min > 0 {
		a.Label.Text += fmt.Sprintf(" — axis starts at %s %s, not 0", strconv.FormatFloat(a.Min, 'g', 3, 64), unit)
	}
}

// dominates tells whether configuration b beats a beyond the noise of
// their repetitions: b is not worse on either axis (its range reaches
// a's) and clearly better on one (its range clears a's entirely). With
// one repetition each this is plain Pareto dominance.
func dominates(b, a *scenarioSummary, axis memoryAxis) bool {
	bm, am := axis.get(b), axis.get(a)
	notWorse := b.pps.Max >= a.pps.Min && bm.Min <= am.Max
	better := b.pps.Min > a.pps.Max || bm.Max < am.Min
	return notWorse && better
}

// paretoSet names the configurations no other dominates beyond noise: a
// configuration whose throughput and memory ranges overlap another's is
// not ruled out by it, however the medians fall.
func paretoSet(pts []*scenarioSummary, axis memoryAxis) map[string]bool {
	on := map[string]bool{}
	for _, a := range pts {
		beaten := false
		for _, b := range pts {
			if b != a && dominates(b, a, axis) {
				beaten = true
				break
			}
		}
		if !beaten {
			on[a.sc.Name] = true
		}
	}
	return on
}

// paretoNames names the configurations on the front by peak RSS, for the
// tables.
func paretoNames(sums []*scenarioSummary) map[string]bool {
	var pts []*scenarioSummary
	for _, s := range sums {
		if s.pps.ok() && s.rss.ok() {
			pts = append(pts, s)
		}
	}
	return paretoSet(pts, rssAxis)
}

// shortNames are the labels of configurations in the plots: the name when
// it is short, else a number keyed beside the plot ("3: sweep/...").
type shortNames struct {
	short map[string]string
	key   []string
}

// maxLabel is the longest name written beside a point or a bar; longer
// ones (matrix names such as "sweep/strategy=hold/partition_workers=4")
// become numbers with a key.
const maxLabel = 22

func pointLabels(sums []*scenarioSummary) shortNames {
	n := shortNames{short: map[string]string{}}
	long := false
	for _, s := range sums {
		long = long || len(s.sc.Name) > maxLabel
	}
	for i, s := range sums {
		// A configuration measured under another host load is marked
		// where it is plotted, so that no point is read as crowned by
		// its code when the host decided.
		mark := ""
		if s.loadSkew != nil {
			mark = " (load!)"
		}
		if !long {
			n.short[s.sc.Name] = s.sc.Name + mark
			continue
		}
		n.short[s.sc.Name] = strconv.Itoa(i+1) + mark
		n.key = append(n.key, fmt.Sprintf("%d  %s", i+1, s.sc.Name))
	}
	return n
}

// anyLoadSkew reports whether any configuration is marked for a
// different host load.
func anyLoadSkew(sums []*scenarioSummary) bool {
	for _, s := range sums {
		if s.loadSkew != nil {
			return true
		}
	}
	return false
}

func (n shortNames) addKey(l *sideLegend) {
	if len(n.key) == 0 {
		return
	}
	l.add("", nil)
	l.add("configurations:", nil)
	for _, k := range n.key {
		l.add(k, nil)
	}
}

// strategiesFigure compares configurations side by side: horizontal bars
// at the median of throughput and of peak memory (RSS, dataset bytes, and
// GPU memory when NVML saw it), one row per configuration, grouped and
// coloured by strategy, each repetition a dot on its bar (a strip plot,
// as criterion draws the samples beside the estimate).
func strategiesFigure(title string, sums []*scenarioSummary, order []string) (figure, bool) {
	var rows []*scenarioSummary
	for _, s := range sums {
		if s.pps.ok() {
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 {
		return figure{}, false
	}
	slices.SortStableFunc(rows, func(a, b *scenarioSummary) int {
		// Top to bottom on the plot is high to low row index.
		if c := cmp.Compare(slices.Index(order, b.sc.Strategy), slices.Index(order, a.sc.Strategy)); c != 0 {
			return c
		}
		return cmp.Compare(b.sc.Name, a.sc.Name)
	})
	labels := pointLabels(sums)
	names := make([]string, len(rows))
	for i, s := range rows {
		names[i] = labels.short[s.sc.Name]
	}

	panels := []strategyPanel{{labelWithUnit(results.PartitionsPerSecond), func(s *scenarioSummary) spread { return s.pps }, false}}
	panels = append(panels, strategyPanel{label(results.PeakRSSBytes), func(s *scenarioSummary) spread { return s.rss }, true})
	for _, extra := range []strategyPanel{
		{"peak dataset bytes", func(s *scenarioSummary) spread { return s.dataset }, true},
		{label(results.PeakGPUMemoryBytes), func(s *scenarioSummary) spread { return s.gpu }, true},
	} {
		for _, s := range rows {
			if extra.get(s).ok() {
				panels = append(panels, extra)
				break
			}
		}
	}

	rowHeight := 0.32 * vg.Inch
	legend := newSideLegend(vg.Points(10))
	var plots []*plot.Plot
	for pi, pn := range panels {
		p := pn.plot(rows, order, names, pi == 0, rowHeight*0.7)
		if pi == 0 {
			for _, strat := range order {
				if slices.ContainsFunc(rows, func(s *scenarioSummary) bool { return s.sc.Strategy == strat }) {
					legend.add(strat, stratThumb{strategyColor(strategyIndex(strat, order))})
				}
			}
		}
		plots = append(plots, p)
	}
	legend.add("", nil)
	legend.add("bar: median", nil)
	legend.add("dots: each repetition", nil)
	labels.addKey(legend)

	nameWidth := vg.Length(0)
	sty := plots[0].Y.Tick.Label
	for _, n := range names {
		nameWidth = max(nameWidth, sty.Width(n))
	}
	w := nameWidth + vg.Length(3.0*float64(len(panels)))*vg.Inch + legend.width() + 0.6*vg.Inch
	h := max(rowHeight*vg.Length(len(rows))+1.6*vg.Inch, legend.height()+1.2*vg.Inch)
	lo := layout{title: title + ": strategies side by side", grid: [][]*plot.Plot{plots}, legends: []*sideLegend{legend}}
	return figure{name: "strategies", w: w, h: h, draw: lo.draw}, true
}

// strategyPanel is one column of the strategies figure.
type strategyPanel struct {
	title string
	get   func(s *scenarioSummary) spread
	bytes bool
}

// plot draws the panel's bars (one per row, at the median) and dots (one
// per repetition, spread a little across the bar so equal values show).
func (pn strategyPanel) plot(rows []*scenarioSummary, order, names []string, first bool, barWidth vg.Length) *plot.Plot {
	sc := scale{1, ""}
	if pn.bytes {
		maxv := 0.0
		for _, s := range rows {
			maxv = math.Max(maxv, pn.get(s).Max)
		}
		sc = byteScale(maxv)
	}
	xlabel := pn.title
	if sc.unit != "" {
		xlabel = fmt.Sprintf("%s (%s)", pn.title, sc.unit)
	}
	p := newPlot("", xlabel, "")
	if first {
		p.NominalY(names...)
	} else {
		p.NominalY(make([]string, len(names))...)
	}
	p.X.Min = 0
	var dots plotter.XYs
	for _, strat := range order {
		var vals plotter.Values
		first := -1
		for i, s := range rows {
			if s.sc.Strategy != strat {
				continue
			}
			v := pn.get(s)
			if !v.ok() {
				continue // no figure for this row: no bar, not a zero bar
			}
			if first < 0 {
				first = i
			}
			for len(vals) < i-first {
				vals = append(vals, 0) // a gap only if a row of the group lacks the figure
			}
			vals = append(vals, v.Median/sc.div)
			for k, x := range v.Values {
				off := 0.0
				if len(v.Values) > 1 {
					off = 0.5 * (float64(k)/float64(len(v.Values)-1) - 0.5)
				}
				dots = append(dots, plotter.XY{X: x / sc.div, Y: float64(i) + off})
			}
		}
		if len(vals) == 0 {
			continue
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			continue
		}
		bars.Horizontal = true
		bars.XMin = float64(first)
		bars.Color = lighten(strategyColor(strategyIndex(strat, order)), 0.45)
		bars.LineStyle.Width = 0
		p.Add(bars)
	}
	if d, err := plotter.NewScatter(dots); err == nil && len(dots) > 0 {
		d.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
		p.Add(d)
	}
	p.X.Max *= 1.05
	p.X.Tick.Marker = plot.TickerFunc(niceTicks)
	return p
}

// stratThumb is a legend swatch in a strategy's bar colour.
type stratThumb struct{ c color.Color }

func (t stratThumb) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(lighten(t.c, 0.45), c.ClipPolygonXY([]vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y},
	}))
}

// sideLegend is a legend drawn beside its plot rather than over the data.
type sideLegend struct {
	plot.Legend
	labels []string
}

func newSideLegend(size vg.Length) *sideLegend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = size
	l.ThumbnailWidth = vg.Points(22)
	l.Padding = vg.Points(3)
	return &sideLegend{Legend: l}
}

// add appends an entry; a nil thumbnail makes a line of text (a note or
// a key entry).
func (l *sideLegend) add(label string, thumb plot.Thumbnailer) {
	if thumb == nil {
		thumb = noThumb{}
	}
	l.Add(label, thumb)
	l.labels = append(l.labels, label)
}

// height is the legend's height once drawn.
func (l *sideLegend) height() vg.Length {
	return vg.Length(len(l.labels)) * (l.TextStyle.Height("M") + l.Padding)
}

type noThumb struct{}

func (noThumb) Thumbnail(*draw.Canvas) {}

func (l *sideLegend) width() vg.Length {
	w := vg.Length(0)
	for _, s := range l.labels {
		w = max(w, l.TextStyle.Width(s))
	}
	return w + l.ThumbnailWidth + l.TextStyle.Width("  ")
}

// layout is a figure of aligned plots under a title, with one legend per
// row of plots in a column on the right.
type layout struct {
	title   string
	grid    [][]*plot.Plot
	legends []*sideLegend // per row; nil entries draw none
}

func (lo layout) draw(dc draw.Canvas) {
	sty := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(13)), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
	dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Points(6)}, lo.title)
	body := dc
	body.Max.Y -= sty.Height(lo.title) + vg.Points(12)

	legendWidth := vg.Length(0)
	for _, l := range lo.legends {
		if l != nil {
			legendWidth = max(legendWidth, l.width())
		}
	}
	if legendWidth > 0 {
		body.Max.X -= legendWidth + vg.Points(10)
	}
	cols := 0
	for _, row := range lo.grid {
		cols = max(cols, len(row))
	}
	tiles := draw.Tiles{Rows: len(lo.grid), Cols: cols, PadX: vg.Points(8), PadY: vg.Points(6), PadLeft: vg.Points(4), PadRight: vg.Points(6), PadBottom: vg.Points(4)}
	canvases := plot.Align(lo.grid, tiles, body)
	for j, row := range lo.grid {
		for i, p := range row {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
		if j < len(lo.legends) && lo.legends[j] != nil {
			// Top-aligned with the row's data area.
			row := canvases[j][0]
			if p := lo.grid[j][0]; p != nil {
				row = p.DataCanvas(row)
			}
			lc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: body.Max.X + vg.Points(10), Y: row.Min.Y},
				Max: vg.Point{X: dc.Max.X, Y: row.Max.Y},
			}}
			lo.legends[j].Draw(lc)
		}
	}
}

// integerTicks marks whole numbers only, at a 1-2-5 step: counters of
// partitions have no half values.
func integerTicks(lo, hi float64) []plot.Tick {
	step := 1.0
	for mag := 1.0; ; mag *= 10 {
		if step = mag; (hi-lo)/step <= 6 {
			break
		}
		if step = 2 * mag; (hi-lo)/step <= 6 {
			break
		}
		if step = 5 * mag; (hi-lo)/step <= 6 {
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ticks
}
