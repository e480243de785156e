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
	switch {
	case maxBytes >= 1<<30:
		return scale{1 << 30, "GiB"}
	case maxBytes >= 1<<20:
		return scale{1 << 20, "MiB"}
	case maxBytes >= 1<<10:
		return scale{1 << 10, "KiB"}
	}
	return scale{1, "B"}
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
type memoryAxis struct {
	file  string
	title string
	get   func(s *scenarioSummary) spread
}

var (
	rssAxis = memoryAxis{"throughput-memory", "peak RSS (kernel VmHWM)", func(s *scenarioSummary) spread { return s.rss }}
	gpuAxis = memoryAxis{"throughput-gpu-memory", "peak GPU memory (process, NVML)", func(s *scenarioSummary) spread { return s.gpu }}
)

// throughputFigure plots throughput against peak memory: one point per
// configuration at its medians, bars spanning min to max over the
// repetitions, colour and marker by strategy, the scenario's name beside
// its point, and the Pareto front (no other configuration has both higher
// throughput and lower memory) as a dashed step line.
func throughputFigure(title string, sums []*scenarioSummary, axis memoryAxis) (figure, bool) {
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
	order := strategyOrder(sums)

	p := newPlot("", fmt.Sprintf("%s (%s)", axis.title, sc.unit), "throughput (partitions/s)")
	legend := newSideLegend(vg.Points(10))

	var labels plotter.XYLabels
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
			labels.XYs = append(labels.XYs, xy[len(xy)-1])
			labels.Labels = append(labels.Labels, s.sc.Name)
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

	if front := paretoFront(pts, axis, sc); len(front) > 1 {
		line, err := plotter.NewLine(front)
		if err == nil {
			line.StepStyle = plotter.PostStep
			line.LineStyle = draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			p.Add(line)
			legend.add("Pareto front", line)
		}
	}

	if l, err := plotter.NewLabels(labels); err == nil {
		for i := range l.TextStyle {
			l.TextStyle[i].Font.Size = vg.Points(8)
		}
		l.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(3)}
		p.Add(l)
	}
	lo := layout{title: title + ": throughput vs " + axis.title, grid: [][]*plot.Plot{{p}}, legends: []*sideLegend{legend}}
	return figure{name: axis.file, w: 9 * vg.Inch, h: 6 * vg.Inch, draw: lo.draw}, true
}

// paretoFront returns the configurations no other beats on both axes,
// ordered by memory: walking up in memory, a point is on the front when
// its throughput is higher than every point before it.
func paretoFront(pts []*scenarioSummary, axis memoryAxis, sc scale) plotter.XYs {
	sorted := slices.Clone(pts)
	slices.SortStableFunc(sorted, func(a, b *scenarioSummary) int {
		if c := cmp.Compare(axis.get(a).Median, axis.get(b).Median); c != 0 {
			return c
		}
		return cmp.Compare(b.pps.Median, a.pps.Median)
	})
	var front plotter.XYs
	best := math.Inf(-1)
	for _, s := range sorted {
		if s.pps.Median > best {
			best = s.pps.Median
			front = append(front, plotter.XY{X: axis.get(s).Median / sc.div, Y: s.pps.Median})
		}
	}
	return front
}

// paretoNames names the configurations on the front, for the tables.
func paretoNames(sums []*scenarioSummary) map[string]bool {
	var pts []*scenarioSummary
	for _, s := range sums {
		if s.pps.ok() && s.rss.ok() {
			pts = append(pts, s)
		}
	}
	on := map[string]bool{}
	front := paretoFront(pts, rssAxis, scale{1, "B"})
	for _, xy := range front {
		for _, s := range pts {
			if s.rss.Median == xy.X && s.pps.Median == xy.Y {
				on[s.sc.Name] = true
			}
		}
	}
	return on
}

// strategiesFigure compares configurations side by side: horizontal bars
// of throughput and of peak memory (RSS, and GPU memory when NVML saw it),
// one row per configuration, grouped and coloured by strategy, with the
// min-max range of the repetitions.
func strategiesFigure(title string, sums []*scenarioSummary) (figure, bool) {
	var rows []*scenarioSummary
	for _, s := range sums {
		if s.pps.ok() {
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 {
		return figure{}, false
	}
	order := strategyOrder(sums)
	slices.SortStableFunc(rows, func(a, b *scenarioSummary) int {
		// Top to bottom on the plot is high to low row index.
		if c := cmp.Compare(slices.Index(order, b.sc.Strategy), slices.Index(order, a.sc.Strategy)); c != 0 {
			return c
		}
		return cmp.Compare(b.sc.Name, a.sc.Name)
	})
	names := make([]string, len(rows))
	for i, s := range rows {
		names[i] = s.sc.Name
	}

	type panel struct {
		title string
		get   func(s *scenarioSummary) spread
		bytes bool
	}
	panels := []panel{{"throughput (partitions/s)", func(s *scenarioSummary) spread { return s.pps }, false}}
	panels = append(panels, panel{"peak RSS", func(s *scenarioSummary) spread { return s.rss }, true})
	for _, s := range rows {
		if s.gpu.ok() {
			panels = append(panels, panel{"peak GPU memory", func(s *scenarioSummary) spread { return s.gpu }, true})
			break
		}
	}

	rowHeight := 0.32 * vg.Inch
	barWidth := rowHeight * 0.7
	var plots []*plot.Plot
	legend := newSideLegend(vg.Points(10))
	for pi, pn := range panels {
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
		if pi == 0 {
			p.NominalY(names...)
		} else {
			p.NominalY(make([]string, len(names))...)
		}
		p.X.Min = 0

		var exy plotter.XYs
		var xerr plotter.XErrors
		for _, strat := range order {
			var vals plotter.Values
			first := -1
			for i, s := range rows {
				if s.sc.Strategy != strat {
					continue
				}
				v := pn.get(s)
				if !v.ok() {
					// No GPU figure for this row: no bar, not a zero bar.
					continue
				}
				if first < 0 {
					first = i
				}
				for len(vals) < i-first {
					vals = append(vals, 0) // a gap only if a row of the group lacks the figure
				}
				vals = append(vals, v.Median/sc.div)
				exy = append(exy, plotter.XY{X: v.Median / sc.div, Y: float64(i)})
				xerr = append(xerr, struct{ Low, High float64 }{(v.Median - v.Min) / sc.div, (v.Max - v.Median) / sc.div})
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
			bars.Color = strategyColor(strategyIndex(strat, order))
			bars.LineStyle.Width = 0
			p.Add(bars)
			if pi == 0 {
				legend.add(strat, bars)
			}
		}
		if len(exy) > 0 {
			p.Add(&plotter.XErrorBars{XYs: exy, XErrors: xerr, LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}, CapWidth: vg.Points(4)})
		}
		plots = append(plots, p)
	}

	w := vg.Length(3.6*float64(len(panels))) * vg.Inch
	h := rowHeight*vg.Length(len(rows)) + 1.6*vg.Inch
	lo := layout{title: title + ": strategies side by side (bars: median; whiskers: min-max)", grid: [][]*plot.Plot{plots}, legends: []*sideLegend{legend}}
	return figure{name: "strategies", w: w, h: h, draw: lo.draw}, true
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

func (l *sideLegend) add(label string, thumbs ...plot.Thumbnailer) {
	l.Add(label, thumbs...)
	l.labels = append(l.labels, label)
}

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
