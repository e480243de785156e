package spec

import (
	"bytes"
	"fmt"
	"text/template"

	"github.com/provebench/provebench/pipeline"
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
	Workload pipeline.Workload
	Pipeline pipeline.Config
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
