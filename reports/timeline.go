package reports

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/provebench/provebench/bench/results"
)

// partitionStages are the live counters that place every partition in
// flight at one stage of the pipeline, in pipeline order. Stacked, they
// show where partitions pile up (the memory wall is waiting_send growing).
var partitionStages = []string{"synthesizing", "waiting_send", "in_channel", "on_gpu", "finalizing"}

// seriesStyle gives the n-th line of a panel its colour and dash, so that
// lines stay apart in print as well as in colour.
func seriesStyle(n int) draw.LineStyle {
	dashes := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}
	return draw.LineStyle{Color: strategyColor(n), Width: vg.Points(1.5), Dashes: dashes[(n/len(palette))%len(dashes)]}
}

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
}

// classifySeries sorts a repetition's counter columns into the timeline's
// panels. live names the counters the run reports a final value for (the
// pipeline's live counters); another column that never decreases is a
// cumulative count of events (partitions_done, gpu_starts). Columns that
// stay at zero are left out: they would only crowd the legend.
func classifySeries(s *results.Series, live map[string]bool) (bytes, stages, counts, events []seriesLine) {
	for _, k := range slices.Sorted(maps.Keys(s.Counters)) {
		col := s.Counters[k]
		if allZero(col) {
			continue
		}
		l := seriesLine{k, ints(col)}
		switch {
		case strings.HasSuffix(k, "_bytes"):
			bytes = append(bytes, l)
		case slices.Contains(partitionStages, k):
			// Placed in pipeline order below.
		case !live[k] && nonDecreasing(col):
			if !strings.HasSuffix(k, "_ms") { // a cumulative time has no place on a count axis
				events = append(events, l)
			}
		default:
			counts = append(counts, l)
		}
	}
	for _, k := range partitionStages {
		if col, ok := s.Counters[k]; ok && !allZero(col) {
			stages = append(stages, seriesLine{k, ints(col)})
		}
	}
	return bytes, stages, counts, events
}

// timelineFigure draws one repetition's series as stacked panels on one
// time axis: process memory (RSS, and GPU memory when NVML saw it), the
// byte counters, the partitions at each pipeline stage (stacked), the other
// live counters and the cumulative event counts. Counters are step lines:
// they change in whole steps between samples. A dashed line marks t = 0,
// the pipeline's start; before it the child was loading its key.
//
// live names the pipeline's live counters (see classifySeries).
func timelineFigure(name, title string, r *results.Repetition, live map[string]bool) (figure, bool) {
	s := r.Series
	if s == nil || len(s.T) == 0 {
		return figure{}, false
	}
	tmin, tmax := s.T[0], s.T[len(s.T)-1]
	memory := []seriesLine{{"RSS", uints(s.RSSBytes)}}
	if len(s.GPUMemoryBytes) > 0 {
		memory = append(memory, seriesLine{"GPU memory (process)", optUints(s.GPUMemoryBytes)})
	}
	if len(s.GPUDeviceMemoryBytes) > 0 {
		memory = append(memory, seriesLine{"GPU memory (device)", optUints(s.GPUDeviceMemoryBytes)})
	}
	byteCounters, stages, counts, events := classifySeries(s, live)

	var panels []*plot.Plot
	var legends []*sideLegend
	addPanel := func(ylabel string, lines []seriesLine, bytes, step, stacked bool) {
		if len(lines) == 0 {
			return
		}
		sc := scale{1, ""}
		if bytes {
			maxv := 0.0
			for _, l := range lines {
				for _, v := range l.ys {
					maxv = math.Max(maxv, v)
				}
			}
			sc = byteScale(maxv)
			ylabel = fmt.Sprintf("%s (%s)", ylabel, sc.unit)
		}
		p := newPlot("", "", ylabel)
		legend := newSideLegend(vg.Points(9))
		if !bytes {
			p.Y.Tick.Marker = plot.TickerFunc(integerTicks)
		}
		p.X.Min, p.X.Max = tmin, tmax
		p.Y.Min = 0

		// Stacked: each line is drawn at the sum of itself and the ones
		// below it, topmost first so that each fill shows its own band.
		ys := make([][]float64, len(lines))
		for i, l := range lines {
			ys[i] = slices.Clone(l.ys)
			if stacked && i > 0 {
				for j := range ys[i] {
					if j < len(ys[i-1]) {
						ys[i][j] += ys[i-1][j]
					}
				}
			}
		}
		ymax := 0.0
		plotted := make([]*plotter.Line, len(lines))
		for i := len(lines) - 1; i >= 0; i-- {
			xy := make(plotter.XYs, 0, len(s.T))
			for j, t := range s.T {
				if j < len(ys[i]) && !math.IsNaN(ys[i][j]) && !math.IsInf(ys[i][j], 0) {
					xy = append(xy, plotter.XY{X: t, Y: ys[i][j] / sc.div})
					ymax = math.Max(ymax, ys[i][j]/sc.div)
				}
			}
			if len(xy) == 0 {
				continue
			}
			pl, err := plotter.NewLine(xy)
			if err != nil {
				continue
			}
			pl.LineStyle = seriesStyle(i)
			if step {
				pl.StepStyle = plotter.PostStep
			}
			if stacked {
				pl.LineStyle.Dashes = nil
				pl.LineStyle.Width = vg.Points(0.8)
				pl.FillColor = lighten(pl.LineStyle.Color, 0.35)
			}
			plotted[i] = pl
		}
		for i := len(lines) - 1; i >= 0; i-- {
			if plotted[i] != nil {
				p.Add(plotted[i])
			}
		}
		// The legend reads top to bottom as the stack does.
		for i := range lines {
			j := i
			if stacked {
				j = len(lines) - 1 - i
			}
			if plotted[j] != nil {
				legend.add(lines[j].label, plotted[j])
			}
		}
		if tmin < 0 {
			start, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 0, Y: math.Max(ymax, 1)}})
			if err == nil {
				start.LineStyle = draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}}
				p.Add(start)
			}
		}
		panels = append(panels, p)
		legends = append(legends, legend)
	}
	addPanel("memory", memory, true, false, false)
	addPanel("live bytes", byteCounters, true, true, false)
	addPanel("partitions by stage", stages, false, true, true)
	addPanel("live counts", counts, false, true, false)
	addPanel("events so far", events, false, true, false)

	xlabel := "time since pipeline start (s)"
	if tmin < 0 {
		xlabel += "; dashed line: pipeline start, key loaded before it"
	}
	panels[len(panels)-1].X.Label.Text = xlabel
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	h := vg.Length(len(panels))*1.9*vg.Inch + 0.8*vg.Inch
	return figure{name: name, w: 9 * vg.Inch, h: h, draw: layout{title: title, grid: grid, legends: legends}.draw}, true
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
