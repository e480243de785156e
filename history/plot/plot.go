package plot

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/provebench/provebench/history/trend"
	"github.com/provebench/provebench/internal/atomicfile"
	"github.com/provebench/provebench/internal/units"
)

// HTMLFile is the page's name in the output folder.
const HTMLFile = "history.html"

// Figure is one metric's series with their change points.
type Figure struct {
	Metric string
	Unit   string // "B" scales to binary units; anything else is shown as is
	Series []trend.Series
	// Changes are the change points of these series, by key.
	Changes map[trend.Key][]trend.Change
}

// Write draws every figure as <metric>.png into dir, and the page
// history.html showing them; it returns the paths written.
func Write(dir, title string, figs []Figure) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("history plot: %w", err)
	}
	var written []string
	var page []pageFigure
	for _, f := range figs {
		data, err := render(f)
		if err != nil {
			return written, err
		}
		name := fileName(f.Metric) + ".png"
		p := filepath.Join(dir, name)
		if err := atomicfile.Write(p, data); err != nil {
			return written, err
		}
		written = append(written, p)
		page = append(page, pageOf(f, name))
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, struct {
		Title   string
		Figures []pageFigure
	}{title, page}); err != nil {
		return written, fmt.Errorf("history plot: %w", err)
	}
	p := filepath.Join(dir, HTMLFile)
	if err := atomicfile.Write(p, b.Bytes()); err != nil {
		return written, err
	}
	return append(written, p), nil
}

// panelHeight is one configuration's panel: small multiples, one panel a
// series on one shared time axis (issue 41: every configuration on one
// axis, runs lined up by index, hid a +27% step, and runs made 20 minutes
// apart shared an x position).
const panelHeight = 1.9 * vg.Inch

// render draws one figure as PNG: a panel per series, stacked, their time
// axes alike, each with its own value axis. gonum/plot panics on some
// degenerate data; a panic becomes an error naming the metric.
func render(f Figure) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("history plot %s: %v", f.Metric, p)
		}
	}()
	div, unit := valueScale(f)
	lo, hi := timeRange(f.Series)
	rows := max(len(f.Series), 1)
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = []*plot.Plot{plot.New()}
	}
	for i, s := range f.Series {
		if err := panel(plots[i][0], s, f.Changes[s.Key], plotutil.DarkColors[i%len(plotutil.DarkColors)], div); err != nil {
			return nil, err
		}
	}
	for i, row := range plots {
		p := row[0]
		p.X.Min, p.X.Max = lo, hi
		p.X.Tick.Marker = plot.TimeTicks{Format: "01-02\n15:04", Time: plot.UTCUnixTime}
		p.Y.Label.Text = unit
		if i < rows-1 {
			p.X.Tick.Label.Color = color.Transparent // the bottom panel's labels say it
		} else {
			p.X.Label.Text = "run's start (UTC, month-day hour:minute)"
		}
	}
	plots[0][0].Title.Text = f.Metric + ": the median of each run's repetitions and their range; dashed: a change point"
	height := panelHeight*vg.Length(rows) + vg.Inch
	c := vgimg.NewWith(vgimg.UseWH(10*vg.Inch, height), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(c)
	canvases := plot.Align(plots, draw.Tiles{Rows: rows, Cols: 1, PadY: vg.Points(10), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("history plot %s: %w", f.Metric, err)
	}
	return buf.Bytes(), nil
}

// panel draws one series into p: its runs' medians at their starts, the
// repetitions' range as bars, each change point as a dashed line midway
// between the last run before it and the first after.
func panel(p *plot.Plot, s trend.Series, changes []trend.Change, col color.Color, div float64) error {
	p.Add(plotter.NewGrid())
	pts := make(plotter.XYs, len(s.Points))
	errs := make(plotter.YErrors, len(s.Points))
	for j, pt := range s.Points {
		pts[j] = plotter.XY{X: unixSeconds(pt.Time), Y: pt.Median / div}
		errs[j] = struct{ Low, High float64 }{(pt.Median - pt.Min) / div, (pt.Max - pt.Median) / div}
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	line.Color, points.Color = col, col
	points.Shape = draw.CircleGlyph{}
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYer
		plotter.YErrorer
	}{pts, errs})
	if err != nil {
		return err
	}
	eb.Color = col
	p.Add(line, points, eb)
	p.Legend.Add(s.Configuration+" ("+s.Backend+")", line, points)
	p.Legend.Top, p.Legend.Left = true, true
	for _, c := range changes {
		if c.Index <= 0 || c.Index >= len(s.Points) {
			continue
		}
		at := (unixSeconds(s.Points[c.Index-1].Time) + unixSeconds(s.Points[c.Index].Time)) / 2
		p.Add(vline{at, color.RGBA{R: 0xcf, G: 0x22, B: 0x2e, A: 0xff}})
	}
	return nil
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// timeRange is the runs' span, padded so the first and last points sit
// inside the axes; a single run gets an hour either side.
func timeRange(series []trend.Series) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, pt := range s.Points {
			lo, hi = math.Min(lo, unixSeconds(pt.Time)), math.Max(hi, unixSeconds(pt.Time))
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	pad := math.Max((hi-lo)*0.04, 3600)
	return lo - pad, hi + pad
}

// valueScale is the divisor and unit the values are drawn in: bytes in
// the binary unit of the largest, the rest as they are.
func valueScale(f Figure) (float64, string) {
	if f.Unit != "B" {
		return 1, f.Unit
	}
	var top float64
	for _, s := range f.Series {
		for _, p := range s.Points {
			top = math.Max(top, p.Max)
		}
	}
	return units.ByteScale(top)
}

type vline struct {
	x   float64
	col color.Color
}

// Plot implements plot.Plotter.
func (v vline) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	x := trX(v.x)
	c.StrokeLine2(draw.LineStyle{Color: v.col, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}},
		x, c.Min.Y, x, c.Max.Y)
}

func short(commit string) string {
	if len(commit) > 7 {
		return commit[:7]
	}
	return commit
}

// fileName keeps letters, digits, '.', '_' and '-' of a metric's name.
func fileName(metric string) string {
	s := strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-') {
			return r
		}
		return '-'
	}, metric)
	if s == "" {
		return "metric"
	}
	return s
}

type pageRow struct {
	Series, Runs, Last, Changes string
}

type pageFigure struct {
	Metric, File string
	Rows         []pageRow
}

func pageOf(f Figure, file string) pageFigure {
	pf := pageFigure{Metric: f.Metric, File: file}
	for _, s := range f.Series {
		row := pageRow{Series: s.Configuration + " (" + s.Backend + ")", Runs: fmt.Sprint(len(s.Points))}
		if n := len(s.Points); n > 0 {
			row.Last = short(s.Points[n-1].Commit) + ": " + format(s.Points[n-1].Median, f.Unit)
		}
		var cs []string
		for _, c := range f.Changes[s.Key] {
			cs = append(cs, fmt.Sprintf("%s %s: %s → %s (%+.1f%%, p %.3g)", c.Time.UTC().Format("2006-01-02 15:04"), short(c.Commit), format(c.Before, f.Unit), format(c.After, f.Unit), c.Percent, c.PValue))
		}
		slices.Sort(cs)
		row.Changes = strings.Join(cs, "; ")
		if row.Changes == "" {
			row.Changes = "none"
		}
		pf.Rows = append(pf.Rows, row)
	}
	return pf
}

// format writes a value in its unit, bytes in binary units.
func format(v float64, unit string) string {
	if unit == "B" {
		return units.FormatBytes(int64(v))
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

var pageTemplate = template.Must(template.New("history").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; margin: 0; }
main { max-width: 1200px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
h2 { border-bottom: 1px solid #eaeef2; padding-bottom: .3rem; margin-top: 2rem; }
img { max-width: 100%; height: auto; display: block; }
table { border-collapse: collapse; font-size: .85rem; margin: .8rem 0; }
th, td { border: 1px solid #d0d7de; padding: .3rem .55rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p>One panel per configuration, on one time axis (each run at its start, UTC). Each point is one run's median over its measured repetitions, the bar their range; a dashed red line marks a change point (E-Divisive means with a permutation test), between the last run before it and the first of the new regime.</p>
{{range .Figures}}<h2 id="{{.Metric}}">{{.Metric}}</h2>
<img src="{{.File}}" alt="{{.Metric}} across runs" loading="lazy">
<table>
<thead><tr><th>configuration</th><th>runs</th><th>last</th><th>change points (first run's date and commit: before → after)</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{.Series}}</td><td>{{.Runs}}</td><td>{{.Last}}</td><td>{{.Changes}}</td></tr>
{{end}}</tbody>
</table>
{{end}}</main>
</body>
</html>
`))
