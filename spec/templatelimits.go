package spec

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
)

// The bounds every exec template renders within. A template runs in
// provebench's own process, before the repetition and outside its
// timeout and memory limit, so what it may cost is bounded here, not by
// the measurement: its output, each string a function makes, the widths
// a format asks for, and the loop iterations (and function calls) it may
// make. Together they bound one Render's memory to a few times
// MaxRenderBytes and its time to MaxRenderSteps small steps.
const (
	// MaxRenderBytes bounds what one templated string renders to, and
	// each string a template function returns.
	MaxRenderBytes = 16 << 20
	// MaxRenderSteps bounds the loop iterations and function calls of
	// one Render, all its templates together.
	MaxRenderSteps = 250_000
	// maxFormatWidth bounds a width or precision in printf's format.
	maxFormatWidth = 4096
)

// stepFunc is the function the renderer places at the start of every
// range body, so that each iteration counts against the budget (a range
// over 10^11 with an empty body would otherwise spin, unseen).
const stepFunc = "provebenchStep"

// ErrTemplateBounds is wrapped by every error of a template that went
// past its bounds.
var ErrTemplateBounds = errors.New("exec template out of bounds")

// renderBudget is one Render's remaining steps.
type renderBudget struct{ steps int }

func (b *renderBudget) step() error {
	b.steps++
	if b.steps > MaxRenderSteps {
		return fmt.Errorf("%w: more than %d loop iterations and function calls", ErrTemplateBounds, MaxRenderSteps)
	}
	return nil
}

// checkLen refuses a string a function made that is longer than a
// template may render.
func checkLen(s string) (string, error) {
	if len(s) > MaxRenderBytes {
		return "", fmt.Errorf("%w: a string of more than %d bytes", ErrTemplateBounds, MaxRenderBytes)
	}
	return s, nil
}

// funcs are the template functions that may make strings, bounded, and
// the step counter; the other built-ins (len, index, slice, eq, ...)
// make nothing larger than their arguments.
func (b *renderBudget) funcs() template.FuncMap {
	wrap := func(f func(...any) string) func(...any) (string, error) {
		return func(args ...any) (string, error) {
			if err := b.step(); err != nil {
				return "", err
			}
			if err := checkArgs(args); err != nil {
				return "", err
			}
			return checkLen(f(args...))
		}
	}
	return template.FuncMap{
		stepFunc:   func() (string, error) { return "", b.step() },
		"print":    wrap(fmt.Sprint),
		"println":  wrap(fmt.Sprintln),
		"html":     wrap(template.HTMLEscaper),
		"js":       wrap(template.JSEscaper),
		"urlquery": wrap(template.URLQueryEscaper),
		"printf": func(format string, args ...any) (string, error) {
			if err := b.step(); err != nil {
				return "", err
			}
			if err := checkFormat(format, args); err != nil {
				return "", err
			}
			if err := checkArgs(args); err != nil {
				return "", err
			}
			return checkLen(fmt.Sprintf(format, args...))
		},
	}
}

// checkArgs refuses arguments whose text, together, is longer than a
// template may render (strings other functions made are bounded each;
// many of them at once are bounded here).
func checkArgs(args []any) error {
	n := 0
	for _, a := range args {
		if s, ok := a.(string); ok {
			n += len(s)
		}
	}
	if n > MaxRenderBytes {
		return fmt.Errorf("%w: arguments of more than %d bytes", ErrTemplateBounds, MaxRenderBytes)
	}
	return nil
}

// checkFormat refuses a printf format whose widths or precisions, written
// or taken from an argument (*), are wider than maxFormatWidth: fmt
// builds the whole padded string before anything can bound it.
func checkFormat(format string, args []any) error {
	star := false
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		n := 0
		for i++; i < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[i]) >= 0; i++ {
			c := format[i]
			switch {
			case c >= '0' && c <= '9':
				if n = n*10 + int(c-'0'); n > maxFormatWidth {
					return fmt.Errorf("%w: printf width or precision above %d in %q", ErrTemplateBounds, maxFormatWidth, format)
				}
			case c == '*':
				star = true
				n = 0
			default:
				n = 0
			}
		}
	}
	if !star {
		return nil
	}
	for _, a := range args {
		if w, ok := asInt(a); ok && (w > maxFormatWidth || w < -maxFormatWidth) {
			return fmt.Errorf("%w: printf width or precision %d (from *) above %d", ErrTemplateBounds, w, maxFormatWidth)
		}
	}
	return nil
}

func asInt(a any) (int64, bool) {
	switch v := a.(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case uint64:
		return int64(min(v, 1<<62)), true
	case uint:
		return int64(min(uint64(v), 1<<62)), true
	}
	return 0, false
}

// limitedWriter keeps what a template writes, up to MaxRenderBytes.
type limitedWriter struct{ b strings.Builder }

func (w *limitedWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > MaxRenderBytes {
		return 0, fmt.Errorf("%w: renders more than %d bytes", ErrTemplateBounds, MaxRenderBytes)
	}
	return w.b.Write(p)
}

// parse parses one exec template with the bounded functions, refuses
// what cannot be bounded (a template calling a template, which may
// recurse or double at each call), and makes every range body count its
// iterations.
func (b *renderBudget) parse(where, s string) (*template.Template, error) {
	t, err := template.New(where).Option("missingkey=error").Funcs(b.funcs()).Parse(s)
	if err != nil {
		return nil, err
	}
	if len(t.Templates()) > 1 || hasTemplateCall(t.Root) {
		return nil, fmt.Errorf("%w: {{define}}, {{block}} and {{template}} are not allowed in exec templates", ErrTemplateBounds)
	}
	tick, err := template.New("step").Funcs(b.funcs()).Parse("{{" + stepFunc + "}}")
	if err != nil {
		return nil, err
	}
	countRanges(t.Root, tick.Root.Nodes[0])
	return t, nil
}

// render executes one exec template against d, bounded.
func (b *renderBudget) render(where, s string, d *ExecData) (string, error) {
	t, err := b.parse(where, s)
	if err != nil {
		return "", err
	}
	var w limitedWriter
	if err := t.Execute(&w, d); err != nil {
		return "", err
	}
	return w.b.String(), nil
}

// hasTemplateCall reports whether a {{template}} is under n.
func hasTemplateCall(n parse.Node) bool {
	found := false
	walkTemplate(n, func(n parse.Node) {
		_, ok := n.(*parse.TemplateNode)
		found = found || ok
	})
	return found
}

// countRanges puts step (an action calling stepFunc) first in the body of
// every range under n.
func countRanges(n parse.Node, step parse.Node) {
	walkTemplate(n, func(n parse.Node) {
		if r, ok := n.(*parse.RangeNode); ok && r.List != nil {
			r.List.Nodes = append([]parse.Node{step}, r.List.Nodes...)
		}
	})
}

// walkTemplate calls fn for n and every node of a template's lists under
// it (actions' pipelines are not lists and are not walked into).
func walkTemplate(n parse.Node, fn func(parse.Node)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkTemplate(c, fn)
		}
		return
	case *parse.IfNode:
		walkTemplate(n.List, fn)
		walkTemplate(n.ElseList, fn)
	case *parse.RangeNode:
		walkTemplate(n.List, fn)
		walkTemplate(n.ElseList, fn)
	case *parse.WithNode:
		walkTemplate(n.List, fn)
		walkTemplate(n.ElseList, fn)
	}
	fn(n)
}
