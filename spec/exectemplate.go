package spec

import (
	"bytes"
	"fmt"
	"text/template"
	"text/template/parse"

	"github.com/provebench/provebench/pipeline/config"
)

// ExecData is what exec templates read: {{.Vars.pw}}, {{.Dir}},
// {{.Provebench}}, {{.Pipeline.ChannelCapacity}} and so on.
type ExecData struct {
	// Name is the configuration's name; Repetition its index from 1, as
	// results number it (warm-ups and measured repetitions count
	// separately).
	Name       string
	Repetition int
	Warmup     bool
	// Vars are the scenario's vars, as written (or swept).
	Vars     map[string]string
	Workload config.Workload
	Pipeline config.Config
	Backend  string
	// Provebench is the path of this provebench binary.
	Provebench string
	// Dir is the configuration's own directory under the output
	// directory, made before setup: a place for its files.
	Dir string
	// OutDir is the run's output directory; CacheDir provebench's
	// proving key cache (for `provebench engine --cache`).
	OutDir   string
	CacheDir string
}

// CheckExecTemplates parses every template of an exec spec, so that a
// syntax error is reported when scenarios load, not when a repetition
// runs.
func CheckExecTemplates(e *ExecSpec) error {
	var err error
	e.each(func(where string, s *string) {
		if err != nil {
			return
		}
		if _, perr := template.New(where).Option("missingkey=error").Parse(*s); perr != nil {
			err = fmt.Errorf("%s: %w", where, perr)
		}
	})
	return err
}

// Render returns a copy of e with every template executed against d.
func (e *ExecSpec) Render(d *ExecData) (*ExecSpec, error) {
	out := *e
	out.Command = append([]string(nil), e.Command...)
	out.Env = make(map[string]string, len(e.Env))
	for k, v := range e.Env {
		out.Env[k] = v
	}
	out.Files = append([]ExecFile(nil), e.Files...)
	out.Setup = make([][]string, len(e.Setup))
	for i, argv := range e.Setup {
		out.Setup[i] = append([]string(nil), argv...)
	}
	if e.Daemon != nil {
		dm := *e.Daemon
		dm.Command = append([]string(nil), e.Daemon.Command...)
		out.Daemon = &dm
	}
	if e.Status != nil {
		st := *e.Status
		out.Status = &st
	}
	if e.Prometheus != nil {
		pm := *e.Prometheus
		out.Prometheus = &pm
	}
	var err error
	out.each(func(where string, s *string) {
		if err != nil {
			return
		}
		t, perr := template.New(where).Option("missingkey=error").Parse(*s)
		if perr != nil {
			err = fmt.Errorf("%s: %w", where, perr)
			return
		}
		var b bytes.Buffer
		if xerr := t.Execute(&b, d); xerr != nil {
			err = fmt.Errorf("%s: %w", where, xerr)
			return
		}
		*s = b.String()
	})
	return &out, err
}

// each calls fn for every templated string of e, with where it is.
func (e *ExecSpec) each(fn func(where string, s *string)) {
	for i := range e.Command {
		fn(fmt.Sprintf("exec.command[%d]", i), &e.Command[i])
	}
	for k := range e.Env {
		v := e.Env[k]
		fn("exec.env."+k, &v)
		e.Env[k] = v
	}
	fn("exec.dir", &e.Dir)
	for i := range e.Files {
		fn(fmt.Sprintf("exec.files[%d].path", i), &e.Files[i].Path)
		fn(fmt.Sprintf("exec.files[%d].content", i), &e.Files[i].Content)
	}
	for i := range e.Setup {
		for j := range e.Setup[i] {
			fn(fmt.Sprintf("exec.setup[%d][%d]", i, j), &e.Setup[i][j])
		}
	}
	if e.Daemon != nil {
		for i := range e.Daemon.Command {
			fn(fmt.Sprintf("exec.daemon.command[%d]", i), &e.Daemon.Command[i])
		}
		fn("exec.daemon.ready_url", &e.Daemon.ReadyURL)
	}
	if e.Status != nil {
		fn("exec.status.url", &e.Status.URL)
	}
	if e.Prometheus != nil {
		fn("exec.prometheus.url", &e.Prometheus.URL)
	}
}

// DataFields lists the fields of ExecData that e's templates read, each
// as the names that reach it: {{.Workload.Constraints}} reads [Workload
// Constraints]. A name that stops at a struct ({{.Workload}}, {{with
// .Pipeline}}) reads all of it, and the dot itself ({{.}}, or $) reads
// everything: an empty list. Templates that do not parse read nothing
// (CheckExecTemplates reports them).
func (e *ExecSpec) DataFields() [][]string {
	var out [][]string
	add := func(names []string) { out = append(out, names) }
	c := *e // each writes env values back: leave e's map alone
	c.Env = make(map[string]string, len(e.Env))
	for k, v := range e.Env {
		c.Env[k] = v
	}
	c.each(func(where string, s *string) {
		if t, err := template.New(where).Parse(*s); err == nil {
			fieldsRead(t.Root, add)
		}
	})
	return out
}

// fieldsRead calls add with each chain of field names that n and the
// nodes under it read from the template's data.
func fieldsRead(n parse.Node, add func([]string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			for _, c := range n.Nodes {
				fieldsRead(c, add)
			}
		}
	case *parse.ActionNode:
		fieldsRead(n.Pipe, add)
	case *parse.PipeNode:
		if n != nil {
			for _, c := range n.Cmds {
				fieldsRead(c, add)
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			fieldsRead(a, add)
		}
	case *parse.FieldNode:
		add(n.Ident)
	case *parse.VariableNode:
		if n.Ident[0] == "$" { // $ is the data; other variables hold what was read into them
			add(n.Ident[1:])
		}
	case *parse.ChainNode:
		fieldsRead(n.Node, add)
	case *parse.DotNode:
		add(nil)
	case *parse.IfNode:
		fieldsRead(n.Pipe, add)
		fieldsRead(n.List, add)
		fieldsRead(n.ElseList, add)
	case *parse.RangeNode:
		fieldsRead(n.Pipe, add)
		fieldsRead(n.List, add)
		fieldsRead(n.ElseList, add)
	case *parse.WithNode:
		fieldsRead(n.Pipe, add)
		fieldsRead(n.List, add)
		fieldsRead(n.ElseList, add)
	case *parse.TemplateNode:
		fieldsRead(n.Pipe, add)
	}
}
