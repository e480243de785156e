package scenarios

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/provebench/provebench/spec"
	"gopkg.in/yaml.v3"
)

// The exec block's dry run: validate renders every template of an exec
// configuration against data shaped as a repetition's (its own vars,
// workload and pipeline; paths of the same form), within the renderer's
// bounds, so that a template that cannot render, or renders a command no
// process can run, is refused at its line rather than failing every
// repetition after the output folder is written.

// dryRunData is a repetition's data for a configuration, with paths that
// stand for the ones the run will choose.
func dryRunData(s *spec.Spec) *spec.ExecData {
	vars := s.Vars
	if vars == nil {
		vars = map[string]string{}
	}
	return &spec.ExecData{
		Name: s.Name, Repetition: 1, Vars: vars,
		Workload: s.Workload, Pipeline: s.Pipeline, Backend: s.Backend,
		Provebench: "/usr/local/bin/provebench", Dir: "/provebench-out/exec/" + s.Name,
		OutDir: "/provebench-out", CacheDir: "/provebench-cache",
	}
}

// dryRunExec renders s's exec block and reports what would fail every
// repetition, at the string it comes from.
func (p *parser) dryRunExec(pt *point, s *spec.Spec) {
	l := pt.values["exec"]
	if l == nil || l.node == nil || s.Exec == nil || p.boundless[l] {
		return
	}
	e, err := s.Exec.Render(dryRunData(s))
	if errors.Is(err, spec.ErrTemplateBounds) {
		if p.boundless == nil {
			p.boundless = map[*leaf]bool{}
		}
		p.boundless[l] = true
	}
	if err != nil {
		where, msg := splitWhere(err.Error())
		p.execError(pt, l, where, "renders with this configuration's data to an error: "+msg)
		return
	}
	for _, prob := range renderedProblems(e) {
		p.execError(pt, l, prob.where, prob.msg)
	}
}

type renderedProblem struct{ where, msg string }

// renderedProblems lists what in a rendered exec block no process can
// run: an empty program, NUL bytes (execve ends a string at one).
func renderedProblems(e *spec.ExecSpec) []renderedProblem {
	var out []renderedProblem
	argv := func(where string, a []string) {
		if len(a) > 0 && a[0] == "" {
			out = append(out, renderedProblem{where + "[0]", "renders to an empty program name: want the program to run"})
		}
		for i, s := range a {
			if strings.ContainsRune(s, 0) {
				out = append(out, renderedProblem{fmt.Sprintf("%s[%d]", where, i), "renders to text with a NUL byte, which a command's argument cannot hold"})
			}
		}
	}
	argv("exec.command", e.Command)
	for i, a := range e.Setup {
		argv(fmt.Sprintf("exec.setup[%d]", i), a)
	}
	if e.Daemon != nil {
		argv("exec.daemon.command", e.Daemon.Command)
	}
	for k, v := range e.Env {
		if strings.ContainsRune(v, 0) {
			out = append(out, renderedProblem{"exec.env." + k, "renders to text with a NUL byte, which an environment variable cannot hold"})
		}
	}
	if strings.ContainsRune(e.Dir, 0) {
		out = append(out, renderedProblem{"exec.dir", "renders to text with a NUL byte, which a path cannot hold"})
	}
	return out
}

// splitWhere splits "exec.command[0]: message" as Render words its errors.
func splitWhere(s string) (where, msg string) {
	if i := strings.Index(s, ": "); i > 0 && strings.HasPrefix(s, "exec.") {
		return s[:i], s[i+2:]
	}
	return "exec", s
}

// execError reports a problem with the string of the exec block l at
// where (exec.files[1].content), at the line it is written on.
func (p *parser) execError(pt *point, l *leaf, where, msg string) {
	sub := strings.TrimPrefix(where, "exec")
	node := nodeAt(deref(l.node), sub)
	path := l.path + sub
	if pt.own != "" && (l.path == pt.own || strings.HasPrefix(l.path, pt.own+".")) {
		p.errorf(node, path, "%s", msg)
		return
	}
	p.sharedErrorf(node, path, msg, pt.name)
}

// nodeAt finds the node at a path below n (.files[1].content), or the
// deepest node on the way that exists.
func nodeAt(n *yaml.Node, sub string) *yaml.Node {
	for _, seg := range pathSegments(sub) {
		next, err := childAt(deref(n), seg)
		if err != nil {
			return n
		}
		n = next
	}
	return n
}

// pathSegments splits ".files[1].content" into files, 1, content.
func pathSegments(sub string) []string {
	sub = strings.NewReplacer("[", ".", "]", "").Replace(sub)
	return strings.FieldsFunc(sub, func(r rune) bool { return r == '.' })
}

var errNoChild = errors.New("no such child")

// childAt is the value of a mapping's key, or a sequence's item.
func childAt(n *yaml.Node, seg string) (*yaml.Node, error) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				return n.Content[i+1], nil
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i], nil
		}
	}
	return nil, errNoChild
}
