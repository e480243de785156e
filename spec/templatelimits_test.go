package spec

import (
	"errors"
	"strings"
	"testing"
)

func renderOne(s string) (string, error) {
	e := &ExecSpec{Command: []string{s}}
	out, err := e.Render(&ExecData{Name: "c", Repetition: 1, Vars: map[string]string{"pw": "7"}})
	if err != nil {
		return "", err
	}
	return out.Command[0], nil
}

// Issue 42 case 1: a template renders in provebench's own process, outside
// the repetition's timeout and memory limit, so it is bounded itself: its
// output, its loops, the widths it formats, and calls of templates.
func TestRenderBounded(t *testing.T) {
	for name, tmpl := range map[string]string{
		"output":         `{{range 5000}}{{printf "%04096d" 0}}{{end}}`,
		"empty loop":     `{{range 2000000}}{{end}}x`,
		"nested loops":   `{{range 2000}}{{range 2000}}{{end}}{{end}}`,
		"width":          `{{printf "%0999999d" 0}}`,
		"width from arg": `{{printf "%0*d" 999999 0}}`,
		"doubling":       `{{$x := "aaaaaaaa"}}{{range 40}}{{$x = printf "%s%s" $x $x}}{{end}}{{len $x}}`,
		"template call":  `{{define "a"}}x{{end}}{{template "a"}}`,
		"block":          `{{block "b" .}}x{{end}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := renderOne(tmpl)
			if !errors.Is(err, ErrTemplateBounds) {
				t.Fatalf("Render(%q) = %v, want an error wrapping ErrTemplateBounds", tmpl, err)
			}
			if !strings.Contains(err.Error(), "exec.command[0]") {
				t.Errorf("error does not say where: %v", err)
			}
			if err := CheckExecTemplates(&ExecSpec{Command: []string{tmpl}}); strings.Contains(name, "template") || name == "block" {
				if err == nil {
					t.Errorf("CheckExecTemplates accepted %q", tmpl)
				}
			}
		})
	}
}

// Templates within the bounds render as text/template renders them.
func TestRenderWithinBounds(t *testing.T) {
	for tmpl, want := range map[string]string{
		`{{.Vars.pw}}-{{.Name}}`:                        "7-c",
		`{{range 3}}{{printf "%03d" .}}{{end}}`:         "000001002",
		`{{range $k, $v := .Vars}}{{$k}}={{$v}}{{end}}`: "pw=7",
		`{{print 1 2}} {{println "a"}}{{html "<"}}`:     "1 2 a\n&lt;",
		`{{printf "%*d|%.2f" 4 7 1.5}}`:                 "   7|1.50",
		`{{printf "%%%d" 5}}`:                           "%5",
	} {
		got, err := renderOne(tmpl)
		if err != nil || got != want {
			t.Errorf("Render(%q) = %q, %v; want %q", tmpl, got, err, want)
		}
	}
}

// FuzzRender feeds Render arbitrary templates: whatever the input, it must
// not panic, and it either fails or renders within MaxRenderBytes.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		`{{.Vars.pw}}`, `{{range 3}}{{.}}{{end}}`, `{{printf "%05d" .Repetition}}`,
		`{{with .Workload}}{{.Constraints}}{{end}}`, `{{if .Warmup}}w{{else}}m{{end}}`,
		`{{range $i, $c := .Name}}{{$i}}{{end}}`, `{{range 10}}{{range 10}}x{{end}}{{end}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := &ExecSpec{Command: []string{s}, Files: []ExecFile{{Path: "f", Content: s}}}
		out, err := e.Render(&ExecData{Name: "cfg", Repetition: 2, Vars: map[string]string{"pw": "7"}})
		if err != nil {
			return
		}
		if len(out.Command[0]) > MaxRenderBytes || len(out.Files[0].Content) > MaxRenderBytes {
			t.Fatalf("rendered %d bytes", len(out.Command[0]))
		}
	})
}
