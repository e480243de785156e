package scenarios

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/provebench/provebench/run/events"
	"github.com/provebench/provebench/spec"
)

// The exec driver's settings: an exec block, which replaces the built-in
// pipeline with an external command, and vars, the user's variables that
// exec templates read as {{.Vars.NAME}} and matrix axes sweep as vars.NAME.
// Both sit beside the built-in fields in any settings block; a later layer's
// exec block replaces an earlier one whole, vars merge one by one.
const (
	execKey = "exec"
	varsKey = "vars"
)

// execField stands for the exec block in a layer.
var execField = &field{path: execKey, kind: kindExec}

// varNameRE is what a variable's name may be: a Go template field name.
var varNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isVarPath(path string) bool {
	name, ok := strings.CutPrefix(path, varsKey+".")
	return ok && varNameRE.MatchString(name)
}

// varField is the field of one user variable: text, swept like any field.
func varField(path string) *field {
	return &field{path: path, kind: kindString, doc: "User variable (exec templates read it as {{.Vars." + strings.TrimPrefix(path, varsKey+".") + "}})."}
}

// vars reads a vars block: name -> scalar.
func (p *parser) vars(n *yaml.Node, path string, into layer) {
	n = deref(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping of variable names to values; got %s", describe(n))
		return
	}
	for _, kv := range p.pairs(n, path, 0) {
		full := varsKey + "." + kv.key.Value
		if !isVarPath(full) {
			p.errorf(kv.key, joinPath(path, kv.key.Value), "%q: a variable name is letters, digits and _, not starting with a digit", kv.key.Value)
			continue
		}
		into[full] = p.leaf(varField(full), kv.val, joinPath(path, kv.key.Value))
	}
}

// setExec copies a point's exec block and vars into its spec.
func setExec(values layer, s *spec.Spec) {
	for _, path := range slices.Sorted(maps.Keys(values)) {
		l := values[path]
		if name, ok := strings.CutPrefix(path, varsKey+"."); ok && l.val != nil {
			if s.Vars == nil {
				s.Vars = make(map[string]string)
			}
			s.Vars[name] = l.val.(string)
		}
	}
	if l := values[execKey]; l != nil && l.val != nil {
		e := *l.val.(*spec.ExecSpec)
		s.Exec = &e
	}
}

// execBlock reads an exec block into a leaf whose value is the
// *spec.ExecSpec (nil when the block has problems, all reported).
func (p *parser) execBlock(n *yaml.Node, path string) *leaf {
	n = deref(n)
	l := &leaf{field: execField, node: n, path: path}
	before := len(p.errs.errs)
	e := &spec.ExecSpec{StopGrace: 5 * time.Second}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping with command (and env, dir, files, setup, daemon, timeline, rules, status, prometheus, ...); got %s", describe(n))
		return l
	}
	hasCommand := false
	for _, kv := range p.pairs(n, path, 0) {
		k, at := kv.key.Value, joinPath(path, kv.key.Value)
		read := execKeyReader(k)
		if read == nil {
			p.unknown(kv.key, at, k, execKeyNames())
			continue
		}
		read(p, e, kv.val, at)
		hasCommand = hasCommand || k == "command"
	}
	if !hasCommand {
		p.errorf(n, path+".command", "missing: the command to run, as a list (argv)")
	}
	if err := spec.CheckExecTemplates(e); err != nil {
		p.errorf(n, path, "template: %v", err)
	}
	if len(p.errs.errs) == before {
		l.val = e
	}
	return l
}

// execReader reads the value v of one key of an exec block, written at
// path at, into e.
type execReader func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string)

// execKeys are the keys of an exec block with their readers, in the order
// an unknown key's message lists them.
var execKeys = []struct {
	name string
	read execReader
}{
	{"command", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) { e.Command = p.argv(v, at) }},
	{"env", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) { e.Env = p.envMap(v, at) }},
	{"dir", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) { e.Dir = p.str(v, at) }},
	{"files", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) {
		for i, item := range p.mappings(v, at) {
			e.Files = append(e.Files, p.execFile(item, fmt.Sprintf("%s[%d]", at, i)))
		}
	}},
	{"setup", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) {
		for i, item := range p.seq(v, at) {
			e.Setup = append(e.Setup, p.argv(item, fmt.Sprintf("%s[%d]", at, i)))
		}
	}},
	{"daemon", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) { e.Daemon = p.daemon(v, at) }},
	{"stop_grace", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) { e.StopGrace = p.duration(v, at) }},
	{"partitions", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) { e.Partitions = p.count(v, at) }},
	{"proofs", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) { e.Proofs = p.count(v, at) }},
	{"timeline", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) { e.Timeline = p.boolean(v, at) }},
	{"rules", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) {
		for i, item := range p.mappings(v, at) {
			e.Rules = append(e.Rules, p.rule(item, fmt.Sprintf("%s[%d]", at, i)))
		}
	}},
	{"status", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) {
		url, every, counters := p.endpoint(v, at)
		e.Status = &spec.StatusSpec{URL: url, Interval: every, Counters: counters}
	}},
	{"prometheus", func(p *parser, e *spec.ExecSpec, v *yaml.Node, at string) {
		url, every, counters := p.endpoint(v, at)
		e.Prometheus = &spec.PrometheusSpec{URL: url, Interval: every, Counters: counters}
	}},
}

// execKeyReader returns the reader of an exec block's key, or nil.
func execKeyReader(name string) execReader {
	for _, k := range execKeys {
		if k.name == name {
			return k.read
		}
	}
	return nil
}

// execKeyNames lists the keys an exec block may hold.
func execKeyNames() []string {
	names := make([]string, len(execKeys))
	for i, k := range execKeys {
		names[i] = k.name
	}
	return names
}

func (p *parser) seq(n *yaml.Node, path string) []*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, path, "want a list; got %s", describe(n))
		return nil
	}
	return n.Content
}

func (p *parser) mappings(n *yaml.Node, path string) []*yaml.Node {
	items, _ := p.list(n, path)
	return slices.DeleteFunc(items, func(x *yaml.Node) bool { return x == nil })
}

func (p *parser) str(n *yaml.Node, path string) string {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || isNull(n) {
		p.errorf(n, path, "want text; got %s", describe(n))
		return ""
	}
	return n.Value
}

func (p *parser) argv(n *yaml.Node, path string) []string {
	items := p.seq(n, path)
	if deref(n).Kind == yaml.SequenceNode && len(items) == 0 {
		p.errorf(n, path, "empty: want the program and its arguments, such as [snarkjs, groth16, prove, ...]")
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = p.str(it, fmt.Sprintf("%s[%d]", path, i))
	}
	return out
}

func (p *parser) stringMap(n *yaml.Node, path string) map[string]string {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping; got %s", describe(n))
		return nil
	}
	out := make(map[string]string)
	for _, kv := range p.pairs(n, path, 0) {
		out[kv.key.Value] = p.str(kv.val, joinPath(path, kv.key.Value))
	}
	return out
}

// envMap reads exec.env: names a process environment can hold (not
// empty, no '=' and no NUL byte, which execve cannot pass) and values
// without NUL bytes.
func (p *parser) envMap(n *yaml.Node, path string) map[string]string {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping; got %s", describe(n))
		return nil
	}
	out := make(map[string]string)
	for _, kv := range p.pairs(n, path, 0) {
		k, at := kv.key.Value, joinPath(path, kv.key.Value)
		v := p.str(kv.val, at)
		switch {
		case k == "" || strings.ContainsAny(k, "=\x00"):
			p.errorf(kv.key, at, "an environment variable's name may not be empty or hold '=' or a NUL byte; got %q", k)
		case strings.Contains(v, "\x00"):
			p.errorf(kv.val, at, "a NUL byte: an environment variable's value cannot hold one")
		}
		out[k] = v
	}
	return out
}

// typed reads a scalar of the exec block as a setting of kind f.kind is
// read everywhere else in the format (field.parse): the same accepted forms,
// limits and messages. It returns nil for an empty or refused value.
func (p *parser) typed(n *yaml.Node, path string, f field) any {
	text := p.str(n, path)
	if text == "" {
		return nil
	}
	v, err := f.parse(text)
	if err != nil {
		p.errorf(n, path, "%v", err)
		return nil
	}
	return v
}

func (p *parser) duration(n *yaml.Node, path string) time.Duration {
	d, _ := p.typed(n, path, field{kind: kindDuration, lo: atLeast(0)}).(time.Duration)
	return d
}

func (p *parser) count(n *yaml.Node, path string) int {
	v, _ := p.typed(n, path, field{kind: kindInt, lo: atLeast(0)}).(int64)
	return int(v)
}

func (p *parser) boolean(n *yaml.Node, path string) bool {
	v, _ := p.typed(n, path, field{kind: kindBool}).(bool)
	return v
}

func (p *parser) number(n *yaml.Node, path string) float64 {
	v, _ := p.typed(n, path, field{kind: kindFloat}).(float64)
	return v
}

func (p *parser) execFile(n *yaml.Node, path string) spec.ExecFile {
	var f spec.ExecFile
	for _, kv := range p.pairs(n, path, 0) {
		at := joinPath(path, kv.key.Value)
		switch kv.key.Value {
		case "path":
			f.Path = p.str(kv.val, at)
		case "content":
			f.Content = p.str(kv.val, at)
		default:
			p.unknown(kv.key, at, kv.key.Value, []string{"path", "content"})
		}
	}
	if f.Path == "" {
		p.errorf(n, path+".path", "missing: where to write the file (relative paths are under {{.Dir}})")
	}
	return f
}

func (p *parser) daemon(n *yaml.Node, path string) *spec.DaemonSpec {
	n = deref(n)
	d := &spec.DaemonSpec{}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping with command and ready_url or ready_delay; got %s", describe(n))
		return d
	}
	for _, kv := range p.pairs(n, path, 0) {
		at := joinPath(path, kv.key.Value)
		switch kv.key.Value {
		case "command":
			d.Command = p.argv(kv.val, at)
		case "ready_url":
			d.ReadyURL = p.str(kv.val, at)
		case "ready_timeout":
			d.ReadyTimeout = p.duration(kv.val, at)
		case "ready_delay":
			d.ReadyDelay = p.duration(kv.val, at)
		default:
			p.unknown(kv.key, at, kv.key.Value, []string{"command", "ready_url", "ready_timeout", "ready_delay"})
		}
	}
	if d.Command == nil {
		p.errorf(n, path+".command", "missing: the daemon's command, as a list (argv)")
	}
	return d
}

func (p *parser) rule(n *yaml.Node, path string) spec.RuleSpec {
	var r spec.RuleSpec
	var matchNode *yaml.Node
	for _, kv := range p.pairs(n, path, 0) {
		at := joinPath(path, kv.key.Value)
		switch kv.key.Value {
		case "match":
			r.Match, matchNode = p.str(kv.val, at), kv.val
		case "action":
			r.Action = p.str(kv.val, at)
		case "counter":
			r.Counter = p.str(kv.val, at)
		case "stage":
			r.Stage = p.str(kv.val, at)
		case "scale":
			r.Scale = p.number(kv.val, at)
		default:
			p.unknown(kv.key, at, kv.key.Value, []string{"match", "action", "counter", "stage", "scale"})
		}
	}
	if matchNode == nil {
		p.errorf(n, path+".match", "missing: the regular expression a line must match")
		return r
	}
	re, err := regexp.Compile(r.Match)
	if err != nil {
		p.errorf(matchNode, path+".match", "%v", err)
		return r
	}
	if r.Action == "" {
		r.Action = string(events.ActionAdd)
	}
	er := events.Rule{Pattern: re, Action: events.Action(r.Action), Counter: r.Counter, Stage: r.Stage}
	if err := er.Check(); err != nil {
		p.errorf(n, path, "%v", err)
	}
	return r
}

func (p *parser) endpoint(n *yaml.Node, path string) (url string, every time.Duration, counters map[string]string) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping with url, interval and counters; got %s", describe(n))
		return
	}
	every = time.Second
	for _, kv := range p.pairs(n, path, 0) {
		at := joinPath(path, kv.key.Value)
		switch kv.key.Value {
		case "url":
			url = p.str(kv.val, at)
		case "interval":
			every = p.duration(kv.val, at)
		case "counters":
			counters = p.stringMap(kv.val, at)
		default:
			p.unknown(kv.key, at, kv.key.Value, []string{"url", "interval", "counters"})
		}
	}
	if url == "" {
		p.errorf(n, path+".url", "missing: the endpoint to poll")
	}
	if len(counters) == 0 {
		p.errorf(n, path+".counters", "missing: what to read (JSON pointer or metric name -> counter name)")
	}
	return
}

// varAxisPattern matches the axis names that sweep user variables.
const varAxisPattern = `^vars\.[A-Za-z_][A-Za-z0-9_]*$`

func scalarSchema() map[string]any {
	return map[string]any{"type": []string{"string", "number", "boolean"}}
}

func varsSchema() map[string]any {
	return map[string]any{
		"type":                 "object",
		"description":          "User variables: exec templates read them as {{.Vars.NAME}}; matrix axes sweep them as vars.NAME.",
		"additionalProperties": scalarSchema(),
	}
}

// execDefs are the JSON Schema definitions of the exec block.
func execDefs() map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	argv := func(desc string) map[string]any {
		return map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "string"}, "description": desc}
	}
	dur := func(desc string) map[string]any {
		return map[string]any{"type": "string", "pattern": durationPattern, "description": desc}
	}
	counters := func(desc string) map[string]any {
		return map[string]any{"type": "object", "minProperties": 1, "additionalProperties": map[string]any{"type": "string"}, "description": desc}
	}
	endpoint := func(desc, what string) map[string]any {
		return object(desc, map[string]any{
			"url":      str("The endpoint (a template)."),
			"interval": dur("How often to poll it (default 1s)."),
			"counters": counters(what + " -> counter name."),
		}, []string{"url", "counters"})
	}
	return map[string]any{
		"exec": object("Run an external command instead of the built-in pipeline (the exec driver). Every string is a Go text/template over the configuration: {{.Vars.NAME}}, {{.Name}}, {{.Repetition}}, {{.Dir}} (the configuration's directory under the output directory), {{.Provebench}} (this binary), {{.Workload.Constraints}}, {{.Pipeline.ChannelCapacity}}, ...", map[string]any{
			"command": argv("The measured command, as argv; the repetition is its run."),
			"env":     map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}, "description": "Environment variables added to provebench's own."},
			"dir":     str("Working directory (default: provebench's own)."),
			"files": map[string]any{"type": "array", "description": "Files written before each repetition; relative paths are under {{.Dir}}.", "items": object("A file rendered from a template.", map[string]any{
				"path": str("Where to write it."), "content": str("What to write."),
			}, []string{"path"})},
			"setup":      map[string]any{"type": "array", "items": argv("A setup command."), "description": "Commands run once per configuration before its warm-ups, outside every measurement."},
			"daemon":     map[string]any{"$ref": "#/$defs/exec.daemon"},
			"stop_grace": dur("Time between SIGTERM and SIGKILL when processes are stopped (default 5s)."),
			"partitions": map[string]any{"type": "integer", "minimum": 0, "description": "Partitions one repetition proves, for throughput when no TIMELINE events count them."},
			"proofs":     map[string]any{"type": "integer", "minimum": 0, "description": "Proofs one repetition proves, for seconds per proof."},
			"timeline":   map[string]any{"type": "boolean", "description": "Read cuzk's TIMELINE,<offset_ms>,<event>,<job_id>,<detail> lines into counters and stage timings."},
			"rules": map[string]any{"type": "array", "description": "Regular-expression rules over output lines.", "items": object("A line rule.", map[string]any{
				"match":   str("Regular expression (Go syntax); (?P<value>...) is the number, (?P<job>...) the job of a stage."),
				"action":  map[string]any{"type": "string", "enum": []string{"set", "add", "start", "end"}, "description": "set or add the counter, start or end the stage (default add)."},
				"counter": str("Counter set or added to."),
				"stage":   str("Stage started or ended."),
				"scale":   map[string]any{"type": "number", "description": "Multiplier of the value (1073741824 for GiB to bytes)."},
			}, []string{"match"})},
			"status":     endpoint("Poll a JSON status page.", "JSON pointer (RFC 6901)"),
			"prometheus": endpoint("Poll a Prometheus text metrics page.", "Metric family name (samples summed over labels)"),
		}, []string{"command"}),
		"exec.daemon": object("A process started before each repetition's command and stopped after it, inside the sampled tree.", map[string]any{
			"command":       argv("The daemon, as argv."),
			"ready_url":     str("Polled until it answers before the command starts."),
			"ready_timeout": dur("How long to wait for ready_url (default 1m)."),
			"ready_delay":   dur("Wait this long (before polling ready_url, if set)."),
		}, []string{"command"}),
	}
}

// execDriverFields are the settings the exec driver itself reads; the
// simulate block is simulate's, whatever runs the configuration.
var execDriverFields = map[string]bool{"repeats": true, "warmups": true, "sample_interval": true, "timeout": true, "memory_limit": true}

// idleFields finds the values written for fields that do nothing on the
// configurations they reach: an exec configuration runs its command, not
// the built-in pipeline, so measure, key, verify and devices do nothing
// there, and workload, pipeline and backend only what its templates read
// of them. A value shared with a built-in configuration (a file's
// defaults, say) does something there and stands.
type idleFields struct {
	used  map[*leaf]bool
	idle  map[*leaf]*point // the first exec configuration it reached
	order []*leaf
}

// note records what the fields of a point's values do for it.
func (f *idleFields) note(pt *point, s *spec.Spec) {
	if f.used == nil {
		f.used, f.idle = map[*leaf]bool{}, map[*leaf]*point{}
	}
	var read [][]string
	if s.Exec != nil {
		read = s.Exec.DataFields()
	}
	for _, fd := range fields {
		l := pt.values[fd.path]
		if l == nil || l.node == nil || l.val == nil || execDriverFields[fd.path] || strings.HasPrefix(fd.path, "simulate.") {
			continue
		}
		if s.Exec == nil || readsField(read, fd.path) {
			f.used[l] = true
			continue
		}
		if _, seen := f.idle[l]; !seen {
			f.idle[l] = pt
			f.order = append(f.order, l)
		}
	}
}

// report refuses each value that reached exec configurations only, at
// the line where it is written.
func (f *idleFields) report(p *parser) {
	for _, l := range f.order {
		if f.used[l] {
			continue
		}
		pt, path := f.idle[l], l.field.path
		msg := "does nothing on an exec configuration, which runs its command, not the built-in pipeline: remove it"
		if names, ok := execDataPath(path); ok {
			msg = fmt.Sprintf("does nothing on an exec configuration: no template of its exec block reads {{.%s}}; remove it, or pass it to the command", strings.Join(names, "."))
		}
		p.pointError(pt, path, msg)
	}
}

// execDataPath is the field of spec.ExecData that holds the setting at a
// field path (workload.bit_fraction: Workload.BitFraction), matched by
// name with case and underscores ignored; ok is false for a setting exec
// templates cannot read.
func execDataPath(path string) (names []string, ok bool) {
	t := reflect.TypeFor[spec.ExecData]()
	for seg := range strings.SplitSeq(path, ".") {
		if t.Kind() != reflect.Struct {
			return nil, false
		}
		f, found := t.FieldByNameFunc(func(name string) bool { return strings.EqualFold(name, strings.ReplaceAll(seg, "_", "")) })
		if !found {
			return nil, false
		}
		names, t = append(names, f.Name), f.Type
	}
	return names, true
}

// readsField reports whether templates that read the chains read (as
// spec.ExecSpec.DataFields lists them) read the setting at a field path:
// one chain reaches it, or a struct that holds it.
func readsField(read [][]string, path string) bool {
	names, ok := execDataPath(path)
	if !ok {
		return false
	}
	for _, chain := range read {
		n := min(len(chain), len(names))
		if slices.Equal(chain[:n], names[:n]) {
			return true
		}
	}
	return false
}
