package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/provebench/provebench/internal/fsname"
	"github.com/provebench/provebench/internal/markdown"
)

// markdown renders the document as GitHub-flavoured Markdown, pictures
// linked as PNG when written (SVG otherwise) next to report.md.
func (d *document) markdown(formats []string) ([]byte, error) {
	ext := pictureExt(formats)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", markdown.Escape(d.Title))
	for _, m := range d.Meta {
		fmt.Fprintf(&b, "- %s\n", markdown.Escape(m))
	}
	b.WriteString("\n")
	for _, w := range d.Warnings {
		fmt.Fprintf(&b, "> **Note:** %s\n\n", markdown.Escape(w))
	}
	for _, s := range d.Sections {
		fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", s.Level), markdown.Escape(s.Heading))
		for _, p := range s.Text {
			fmt.Fprintf(&b, "%s\n\n", markdown.Escape(p))
		}
		if f := s.Figure; f != nil {
			fmt.Fprintf(&b, "![%s](%s.%s)\n", markdown.Escape(f.Alt), f.Name, ext)
			if ext != "svg" && slices.Contains(formats, "svg") {
				fmt.Fprintf(&b, "\n[SVG](%s.svg)\n", f.Name)
			}
			b.WriteString("\n")
		}
		if t := s.Table; t != nil {
			writeMarkdownTable(&b, t)
		}
	}
	return b.Bytes(), nil
}

func writeMarkdownTable(b *bytes.Buffer, t *table) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			fmt.Fprintf(b, " %s |", markdown.Escape(c))
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for _, num := range t.NumericColumns() {
		if num {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	b.WriteString("\n")
}

// pictureExt is the picture format documents link to: PNG when written,
// else the first format asked for.
func pictureExt(formats []string) string {
	if slices.Contains(formats, "png") {
		return "png"
	}
	return formats[0]
}

// pageTemplate is the HTML page: inline CSS and, self-contained, inline
// SVG, with no external asset, so the file can be attached to a CI run or
// mailed; otherwise each figure is an <img> of the picture file beside it.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"svg":    func(svgs map[string]template.HTML, name string) template.HTML { return svgs[name] },
	"anchor": fsname.Slug, // headings can be linked to: report.html#timelines
	"cell":   cellHTML,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Doc.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; margin: 0; background: #fff; }
main { max-width: 1400px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
h1 { font-size: 1.6rem; border-bottom: 1px solid #d0d7de; padding-bottom: .4rem; }
h2 { font-size: 1.3rem; margin-top: 2.2rem; border-bottom: 1px solid #eaeef2; padding-bottom: .3rem; }
h3 { font-size: 1.05rem; margin-top: 1.6rem; }
ul.meta { color: #57606a; padding-left: 1.2rem; overflow-wrap: anywhere; }
p.note { background: #fff8c5; border-left: 4px solid #d4a72c; padding: .5rem .8rem; }
figure { margin: 1rem 0; }
figure svg, figure img { max-width: 100%; height: auto; display: block; }
figcaption { color: #57606a; font-size: .85rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .85rem; margin: .8rem 0; }
th, td { border: 1px solid #d0d7de; padding: .3rem .55rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
.nw { white-space: nowrap; }
tr:nth-child(even) td { background: #fbfcfd; }
@media (max-width: 600px) { main { padding: 1rem .8rem 3rem; } h1 { font-size: 1.35rem; } }
</style>
</head>
<body>
<main>
<h1>{{.Doc.Title}}</h1>
<ul class="meta">{{range .Doc.Meta}}
<li>{{.}}</li>{{end}}
</ul>
{{range .Doc.Warnings}}<p class="note">{{.}}</p>
{{end}}
{{- range .Doc.Sections}}
{{if eq .Level 2}}<h2 id="{{anchor .Heading}}">{{.Heading}}</h2>{{else}}<h3 id="{{anchor .Heading}}">{{.Heading}}</h3>{{end}}
{{range .Text}}<p>{{.}}</p>
{{end}}
{{- with .Figure}}<figure>
{{if $.SVGs}}{{svg $.SVGs .Name}}{{else}}<img src="{{.Name}}.{{$.Ext}}" alt="{{.Alt}}" loading="lazy">{{end}}
<figcaption>{{.Alt}}</figcaption>
</figure>
{{end}}
{{- with .Table}}{{$num := .NumericColumns}}<div class="scroll"><table>
<thead><tr>{{range $i, $h := .Header}}<th{{if index $num $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range $i, $c := .}}{{if index $num $i}}<td class="num">{{cell $c}}</td>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table></div>
{{end}}
{{- end}}
</main>
</body>
</html>
`))

// html renders the document as one page: with the SVG plots inline when
// svgs is set, else referencing the picture files (ext) beside it.
func (d *document) html(svgs map[string][]byte, ext string) ([]byte, error) {
	inline := make(map[string]template.HTML, len(svgs))
	for name, data := range svgs {
		// The SVG is gonum/plot's own output, its text XML-escaped; drop
		// the XML prolog, which has no place inside HTML.
		s := string(data)
		if i := strings.Index(s, "<svg"); i >= 0 {
			s = s[i:]
		}
		inline[name] = template.HTML(s)
	}
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, struct {
		Doc  *document
		SVGs map[string]template.HTML
		Ext  string
	}{d, inline, ext})
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", HTMLFile, err)
	}
	return b.Bytes(), nil
}

// NumericColumns tells, per column, whether every cell that holds a figure
// starts with a digit (placeholders such as "—" and "n/a" aside): those
// columns are right-aligned, so that magnitudes line up.
func (t *table) NumericColumns() []bool {
	num := make([]bool, len(t.Header))
	for i := range num {
		seen := false
		num[i] = true
		for _, r := range t.Rows {
			if i >= len(r) {
				continue
			}
			c := strings.TrimPrefix(r[i], "-")
			if c == "" || c == "—" || strings.HasPrefix(c, "n/a") {
				continue
			}
			seen = true
			if c[0] < '0' || c[0] > '9' {
				num[i] = false
				break
			}
		}
		num[i] = num[i] && seen
	}
	return num
}

// cellHTML escapes a figure's cell and keeps each of its parts in one piece:
// "0.574 (0.533–0.884)" may wrap before the range, never inside it or
// inside a figure and its unit.
func cellHTML(c string) template.HTML {
	var b strings.Builder
	for i, part := range strings.SplitAfter(c, " (") {
		if i > 0 {
			b.WriteString(" ")
			part = "(" + part
		}
		part = strings.TrimSuffix(part, " (")
		fmt.Fprintf(&b, `<span class="nw">%s</span>`, template.HTMLEscapeString(part))
	}
	return template.HTML(b.String())
}
