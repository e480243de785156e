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

// render draws one figure as PNG. gonum/plot panics on some degenerate
// data; a panic becomes an error naming the metric.
func render(f Figure) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("history plot %s: %v", f.Metric, p)
		}
	}()
	div, unit := 1.0, f.Unit
	if f.Unit == "B" {
		var top float64
		for _, s := range f.Series {
			for _, p := range s.Points {
				top = math.Max(top, p.Max)
			}
		}
		div, unit = units.ByteScale(top)
	}
	p := plot.New()
	p.Title.Text = f.Metric
	p.X.Label.Text = "run (oldest first; ticks name the commit)"
	p.Y.Label.Text = fmt.Sprintf("%s (%s), median and range of the repetitions", f.Metric, unit)
	p.Add(plotter.NewGrid())
	longest := 0
	for i, s := range f.Series {
		col := plotutil.DarkColors[i%len(plotutil.DarkColors)]
		pts := make(plotter.XYs, len(s.Points))
		bars := make(plotter.XYs, len(s.Points))
		errs := make(plotter.YErrors, len(s.Points))
		for j, pt := range s.Points {
			pts[j] = plotter.XY{X: float64(j), Y: pt.Median / div}
			bars[j] = pts[j]
			errs[j] = struct{ Low, High float64 }{(pt.Median - pt.Min) / div, (pt.Max - pt.Median) / div}
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = col, col
		points.Shape = draw.CircleGlyph{}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{bars, errs})
		if err != nil {
			return nil, err
		}
		eb.Color = col
		p.Add(line, points, eb)
		p.Legend.Add(s.Configuration+" ("+s.Backend+")", line, points)
		for _, c := range f.Changes[s.Key] {
			p.Add(changeLine(c.Index, col))
		}
		longest = max(longest, len(s.Points))
	}
	p.X.Tick.Marker = commitTicks(f.Series)
	p.X.Tick.Label.Rotation = math.Pi / 2.5
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	p.Legend.Top = true
	p.X.Min, p.X.Max = -0.5, float64(max(longest, 1))-0.5
	c := vgimg.NewWith(vgimg.UseWH(10*vg.Inch, 5.5*vg.Inch), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("history plot %s: %w", f.Metric, err)
	}
	return buf.Bytes(), nil
}

// changeLine is a dashed vertical line just before the first run of a new
// regime.
func changeLine(index int, col color.Color) plot.Plotter { return vline{float64(index) - 0.5, col} }

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

// commitTicks labels run indices with the first series' short commits,
// thinned to about 30 labels.
func commitTicks(series []trend.Series) plot.Ticker {
	var longest *trend.Series
	for i := range series {
		if longest == nil || len(series[i].Points) > len(longest.Points) {
			longest = &series[i]
		}
	}
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		if longest == nil {
			return nil
		}
		step := max(1, len(longest.Points)/30)
		var ticks []plot.Tick
		for i := range longest.Points {
			label := ""
			if i%step == 0 {
				label = short(longest.Points[i].Commit)
			}
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: label})
		}
		return ticks
	})
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
			cs = append(cs, fmt.Sprintf("%s: %s → %s (%+.1f%%, p %.3g)", short(c.Commit), format(c.Before, f.Unit), format(c.After, f.Unit), c.Percent, c.PValue))
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
<p>Each point is one run's median over its measured repetitions, the bar their range; a dashed line marks a change point (E-Divisive means with a permutation test) before the first run of the new regime.</p>
{{range .Figures}}<h2 id="{{.Metric}}">{{.Metric}}</h2>
<img src="{{.File}}" alt="{{.Metric}} across runs" loading="lazy">
<table>
<thead><tr><th>configuration</th><th>runs</th><th>last</th><th>change points (first commit: before → after)</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{.Series}}</td><td>{{.Runs}}</td><td>{{.Last}}</td><td>{{.Changes}}</td></tr>
{{end}}</tbody>
</table>
{{end}}</main>
</body>
</html>
`))
