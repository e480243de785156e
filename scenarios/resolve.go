package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/provebench/provebench/gpu/shape"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/spec"
)

// point is one configuration to run, an explicit scenario or one point of a
// matrix, with a value for every field.
type point struct {
	name, description string
	node, nameNode    *yaml.Node // the scenario or matrix item, and its name
	path              string     // scenarios[i] or matrix[i]
	// own is the path under which values belong to this point alone; values
	// from elsewhere (defaults, a matrix's base and axes) are shared with
	// other points, so messages about them name the point.
	own    string
	values layer
	labels map[string]string
}

// builtins is the layer of built-in defaults, the bottom of every merge.
func builtins() layer {
	l := make(layer, len(fields))
	for _, f := range fields {
		v, err := f.parse(f.def)
		if err != nil {
			panic(fmt.Sprintf("scenarios: built-in default of %s: %v", f.path, err))
		}
		l[f.path] = &leaf{field: f, text: f.def, val: v}
	}
	return l
}

// merge overlays layers, later ones winning field by field.
func merge(layers ...layer) layer {
	out := make(layer, len(fields))
	for _, l := range layers {
		maps.Copy(out, l)
	}
	return out
}

// expand turns a document into its points: built-in defaults, then the
// file's defaults, then a matrix's base, then the scenario's own values or
// the point's axis values.
func expand(doc *document) []*point {
	base := merge(builtins(), doc.defaults)
	var pts []*point
	for _, s := range doc.scenarios {
		pts = append(pts, &point{
			name: s.name, description: s.description,
			node: s.node, nameNode: s.nameNode, path: s.path, own: s.path,
			values: merge(base, s.settings),
		})
	}
	for _, m := range doc.matrices {
		pts = append(pts, m.points(merge(base, m.base))...)
	}
	slices.SortStableFunc(pts, func(a, b *point) int { return cmp.Compare(a.node.Line, b.node.Line) })
	return pts
}

// points is the matrix's cartesian product, the first axis varying slowest.
// A point is named matrix/axis=value/axis=value..., the form Go's benchmark
// tools read as sub-benchmark keys (benchstat -col /strategy).
func (m *matrixDecl) points(base layer) []*point {
	if len(m.axes) == 0 {
		return nil
	}
	for _, a := range m.axes {
		if len(a.values) == 0 {
			return nil
		}
	}
	keys := axisKeys(m.axes)
	var pts []*point
	idx := make([]int, len(m.axes))
	for {
		values := merge(base)
		labels := make(map[string]string, len(m.axes))
		parts := []string{m.name}
		for i, a := range m.axes {
			l := a.values[idx[i]]
			values[a.field.path] = l
			labels[a.field.path] = l.text
			parts = append(parts, keys[i]+"="+l.text)
		}
		pts = append(pts, &point{
			name: strings.Join(parts, "/"), description: m.description,
			node: m.node, nameNode: m.nameNode, path: m.path,
			values: values, labels: labels,
		})
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(m.axes[i].values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return pts
		}
	}
}

// axisKeys names each axis in derived names by the shortest tail of its
// path that no other axis of the matrix shares: its last segment, unless
// that is ambiguous.
func axisKeys(axes []*axis) []string {
	keys := make([]string, len(axes))
	for i, a := range axes {
		segs := strings.Split(a.field.path, ".")
		for n := 1; n <= len(segs); n++ {
			tail := strings.Join(segs[len(segs)-n:], ".")
			unique := true
			for j, b := range axes {
				if j != i && (b.field.path == tail || strings.HasSuffix(b.field.path, "."+tail)) {
					unique = false
				}
			}
			keys[i] = tail
			if unique {
				break
			}
		}
	}
	return keys
}

// spec builds a point's spec.Spec and checks the rules that join fields.
func (p *parser) spec(pt *point) spec.Spec {
	var s spec.Spec
	for _, f := range fields {
		if l := pt.values[f.path]; l.val != nil {
			f.set(&s, l.val)
		}
	}
	s.Name = pt.name
	s.Description = pt.description
	s.Source = fmt.Sprintf("%s:%d", p.file, pt.node.Line)
	if len(pt.labels) > 0 {
		s.Labels = pt.labels
	}
	setExec(pt.values, &s)
	if s.Exec == nil {
		p.check(pt, &s) // the built-in pipeline's rules; an exec scenario does not use it
	} else {
		p.checkExec(pt, &s)
	}
	// Resolve what the loader can, so results record what ran: auto keys
	// become setup or random, and verification is off where it cannot
	// succeed (random keys).
	if s.Workload.Constraints > 0 {
		s.Key = s.Key.Resolve(s.Workload.Constraints)
	}
	s.Verify = s.Verify && s.Key == shape.KindSetup
	return s
}

// check applies the rules that involve more than one field. A rule whose
// fields did not parse is skipped: their errors are already reported. The
// engine's own validation (config.Workload.Validate, Config.Validate)
// runs last, so the loader never accepts a configuration the engine would
// refuse; its findings on fields this loader already reported are dropped.
func (p *parser) check(pt *point, s *spec.Spec) {
	c := p.newPointCheck(pt)
	c.sampleInterval(s)
	c.choicesWritten(s)
	if c.valid("workload.constraints") {
		c.datasetFits(s)
	}
	c.engineRules(s)
}

// pointCheck is one point's cross-field check under way: it remembers the
// fields it has reported, so that the engine's findings on the same fields
// are not said twice.
type pointCheck struct {
	p        *parser
	pt       *point
	complete bool // every value of the point parsed
	reported map[string]bool
}

func (p *parser) newPointCheck(pt *point) *pointCheck {
	complete := true
	for _, l := range pt.values {
		complete = complete && l.val != nil
	}
	return &pointCheck{p: p, pt: pt, complete: complete, reported: make(map[string]bool)}
}

// valid reports whether the values at paths all parsed.
func (c *pointCheck) valid(paths ...string) bool {
	for _, path := range paths {
		if c.pt.values[path].val == nil {
			return false
		}
	}
	return true
}

// report reports a problem with the field at path, and remembers it.
func (c *pointCheck) report(path, format string, args ...any) {
	c.reported[path] = true
	c.p.pointError(c.pt, path, fmt.Sprintf(format, args...))
}

// written is the value at path as it was written.
func (c *pointCheck) written(path string) string { return c.pt.values[path].text }

func (c *pointCheck) sampleInterval(s *spec.Spec) {
	if c.valid("sample_interval", "timeout") && s.SampleInterval > s.Timeout {
		c.report("sample_interval", "%s is longer than the timeout of %s: no sample would be taken before the repetition is stopped",
			c.written("sample_interval"), c.written("timeout"))
	}
}

// choicesWritten refuses a strategy whose setting has no default a user
// could mean: a byte budget is the memory given to the pipeline, and a
// default of some MiB silently meant no limit at 2^12 constraints and an
// unusable one at 2^27. (The pacer's settings are control gains and a
// queue depth in partitions, the same at every size: their defaults
// stand.)
func (c *pointCheck) choicesWritten(s *spec.Spec) {
	if !c.valid("pipeline.strategy") || !s.Pipeline.Strategy.Has(config.Budget) {
		return
	}
	if l := c.pt.values["pipeline.budget"]; l == nil || l.node == nil {
		c.report("pipeline.strategy", "%s needs pipeline.budget, the live dataset bytes the pipeline may hold (such as budget: 8GiB); it has no default",
			c.written("pipeline.strategy"))
		c.reported["pipeline.budget"] = true // the default's own problems are moot
	}
}

// datasetFits checks the fields one partition's dataset must fit in (the
// budget, the memory limit), and that a real setup of its size is one that
// finishes.
func (c *pointCheck) datasetFits(s *spec.Spec) {
	w, pc := s.Workload, s.Pipeline
	params := w.Circuit()
	abc, wires := params.DatasetBytes()
	dataset := fmt.Sprintf("one partition's dataset at 2^%d constraints (%s: %s a/b/c + %s wires)",
		params.LogConstraints(), formatBytes(abc+wires), formatBytes(abc), formatBytes(wires))
	// The budget gate's own check, worded with the value as written.
	if c.valid("pipeline.strategy", "pipeline.budget") && !c.reported["pipeline.budget"] && pc.Strategy.Has(config.Budget) && pc.Budget < abc+wires {
		c.report("pipeline.budget", "%s is less than %s; admission could never start one", c.written("pipeline.budget"), dataset)
	}
	if c.valid("memory_limit") && s.MemoryLimit > 0 && s.MemoryLimit < abc+wires {
		c.report("memory_limit", "%s is less than %s; every repetition would be stopped", c.written("memory_limit"), dataset)
	}
	if c.valid("key") && s.Key == shape.KindSetup && w.Constraints > maxSetupConstraints {
		c.report("key", "a real setup of 2^%d constraints takes hours; above 2^%d use key random (or auto)",
			params.LogConstraints(), log2(maxSetupConstraints))
	}
}

// engineRules reports what the engine's own validation finds: each gate of
// the strategy checks its fields (config.Registered). A field that did
// not parse is zero here: while there is one, only the problems of fields
// that parsed are reported.
func (c *pointCheck) engineRules(s *spec.Spec) {
	w, pc := s.Workload, s.Pipeline
	pt := c.pt
	for _, err := range flatten(errors.Join(w.Validate(), pc.ValidateWritten(), pc.Resolved().Validate(w))) {
		var fe *config.FieldError
		if !errors.As(err, &fe) {
			if c.complete {
				c.p.pointError(pt, "", err.Error())
			}
			continue
		}
		path := fe.Field
		if l := pt.values[path]; c.reported[path] || (!c.complete && (l == nil || l.val == nil)) {
			continue
		}
		if pt.values[path] == nil {
			c.p.pointError(pt, "", fe.Error())
			continue
		}
		c.report(path, "%s", fe.Problem)
	}
}

// minExecMemoryLimit is the least memory_limit an exec scenario may set:
// below it no process tree runs at all (a shell alone holds about 1 MiB),
// so every repetition would be stopped; 1B is a typo, not a limit.
const minExecMemoryLimit = 4 << 20

// checkExec applies the rules of an exec scenario that involve its
// measurement rather than the built-in pipeline.
func (p *parser) checkExec(pt *point, s *spec.Spec) {
	if l := pt.values["memory_limit"]; l != nil && l.val != nil && s.MemoryLimit > 0 && s.MemoryLimit < minExecMemoryLimit {
		p.pointError(pt, "memory_limit", fmt.Sprintf("%s is less than %s, below what any process tree needs; every repetition would be stopped",
			l.text, formatBytes(minExecMemoryLimit)))
	}
}

// flatten lists the errors joined in err (errors.Join nests).
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// pointError reports a problem with a point's value of the field at path:
// at the line where that value was written, naming the point when the value
// is shared with others; at the point itself, naming the field, for a
// built-in default or a problem of no one field (path "").
func (p *parser) pointError(pt *point, path, msg string) {
	node, where := pt.node, pt.path
	if l := pt.values[path]; l != nil {
		if l.node != nil {
			node, where = l.node, l.path
		} else {
			msg = fmt.Sprintf("%s (built-in default %s): %s", path, l.text, msg)
		}
	}
	if pt.own != "" && (where == pt.own || strings.HasPrefix(where, pt.own+".")) {
		p.errorf(node, where, "%s", msg)
		return
	}
	p.sharedErrorf(node, where, msg, pt.name)
}

// maxNamed bounds the scenarios a shared problem lists by name.
const maxNamed = 4

// sharedErrorf reports a problem with a value that several points share,
// once, naming the points it affects.
func (p *parser) sharedErrorf(node *yaml.Node, path, msg, name string) {
	key := Error{File: p.file, Line: node.Line, Column: node.Column, Path: path, Msg: msg}
	if p.shared == nil {
		p.shared = make(map[Error]*sharedError)
	}
	se := p.shared[key]
	if se == nil {
		e := key
		se = &sharedError{err: &e, base: msg}
		p.shared[key] = se
		p.errs.add(se.err)
	}
	se.names = append(se.names, name)
	switch n := len(se.names); {
	case n == 1:
		se.err.Msg = fmt.Sprintf("%s (in scenario %s)", se.base, name)
	case n <= maxNamed:
		se.err.Msg = fmt.Sprintf("%s (in scenarios %s)", se.base, strings.Join(se.names, ", "))
	default:
		se.err.Msg = fmt.Sprintf("%s (in scenarios %s and %d more)", se.base, strings.Join(se.names[:maxNamed], ", "), n-maxNamed)
	}
}

// formatBytes writes a byte count in the largest binary unit that holds it
// exactly, or in bytes with an approximation when none does (a rounded
// figure would mislead whoever sizes a budget from it).
func formatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	u := 0
	for u < len(units)-1 && n%(int64(1)<<(10*(u+1))) == 0 && n != 0 {
		u++
	}
	if u > 0 || n < 1024 {
		return fmt.Sprintf("%d%s", n>>(10*u), units[u])
	}
	v, a := float64(n), 0
	for v >= 1024 && a < len(units)-1 {
		v /= 1024
		a++
	}
	return fmt.Sprintf("%dB (~%.4g%s)", n, v, units[a])
}
