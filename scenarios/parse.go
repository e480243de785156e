package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Version is the version of the scenario format this package reads.
const Version = 1

// maxMatrixPoints bounds one matrix: more points than this is a typo in an
// axis, not a sweep anyone would run, nor simulate in the seconds a search
// is for (each point is simulated in full, at whatever size it names).
const maxMatrixPoints = 10000

// maxConfigurations bounds the configurations of one load, every file's
// scenarios and matrix points together. It is counted before any point is
// built: YAML aliases let a few kilobytes name one axes block from many
// matrices, and a million configurations cost gigabytes to expand, longer
// than anyone would run them, and a search far longer than its seconds.
const maxConfigurations = 10000

// maxMergeDepth bounds chains of YAML merge keys (<<), which can otherwise
// refer back to themselves.
const maxMergeDepth = 8

// namePattern is what an explicit scenario or matrix name may contain.
// Names become Go benchmark names and file names: no spaces, and no '/' or
// '=' either, which Go benchmark tools read as sub-benchmark keys (the
// derived names of matrix points use them that way).
const namePattern = `^[A-Za-z0-9][A-Za-z0-9._+-]*$`

var nameRE = regexp.MustCompile(namePattern)

// leaf is one value of a field: written in a file, or a built-in default.
type leaf struct {
	field *field
	text  string     // the scalar as written
	val   any        // the parsed value; nil when it is invalid (and reported)
	node  *yaml.Node // nil for built-in defaults
	path  string     // where it was written, such as defaults.pipeline.budget
}

// layer is a partial configuration: field path -> value. Layers merge field
// by field, which is what makes overrides deep.
type layer map[string]*leaf

// document is one parsed scenario file.
type document struct {
	file      string
	defaults  layer
	scenarios []*scenarioDecl
	matrices  []*matrixDecl
}

type scenarioDecl struct {
	name, description string
	node, nameNode    *yaml.Node
	path              string // scenarios[i]
	settings          layer
}

type matrixDecl struct {
	name, description string
	node, nameNode    *yaml.Node
	path              string // matrix[i]
	base              layer
	axes              []*axis
}

// axis is one swept field and its values, in the order written.
type axis struct {
	field  *field
	key    *yaml.Node
	path   string
	values []*leaf
}

// parser reads one file's YAML nodes into a document, reporting every
// problem it meets and carrying on past it.
type parser struct {
	file string
	errs *errorList
	// configs counts the configurations of the load so far, across its
	// files; once it passes maxConfigurations nothing more is read.
	configs *configCount
	// shared collects the points that break a rule through one shared
	// value, so the value is reported once with all their names.
	shared map[Error]*sharedError
	// idle collects the values written for fields that do nothing on the
	// configurations they reach (exec configurations).
	idle idleFields
	// boundless remembers the exec blocks whose templates went past the
	// renderer's bounds, so that one shared by many configurations is
	// rendered (and reported) once, not once for each.
	boundless map[*leaf]bool
}

// configCount is the running total of a load's configurations.
type configCount struct {
	n    int
	over bool // the cap was passed and reported
}

// countConfigs adds n configurations declared at node, and reports false (once,
// at the declaration that passes the cap) when the load is over its cap.
func (p *parser) countConfigs(node *yaml.Node, path string, n int) bool {
	c := p.configs
	if c.over {
		return false
	}
	c.n += n
	if c.n > maxConfigurations {
		c.over = true
		p.errorf(node, path, "%d configurations so far, more than the %d one load may define; split the sweep or run its files apart", c.n, maxConfigurations)
		return false
	}
	return true
}

type sharedError struct {
	err   *Error
	base  string
	names []string
}

func (p *parser) errorf(n *yaml.Node, path, format string, args ...any) {
	e := &Error{File: p.file, Line: 1, Column: 1, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = max(1, n.Line), max(1, n.Column)
	}
	p.errs.add(e)
}

// syntaxError reports a YAML syntax error where yaml.v3 found it, as
// precisely as its message allows.
func (p *parser) syntaxError(data []byte, err error) {
	line, col, msg := syntaxPosition(data, err)
	p.errs.add(&Error{File: p.file, Line: line, Column: col, Msg: "YAML syntax: " + msg})
}

// parse reads a whole file. It returns nil when the file is not a scenario
// document at all (the reason is reported).
func (p *parser) parse(data []byte) *document {
	top := p.decodeTop(data)
	if top == nil {
		return nil
	}
	kvs := p.pairs(top, "", 0)
	if !p.checkVersion(top, kvs) {
		return nil // the rest was written for another format; its errors would mislead
	}
	return p.body(top, kvs)
}

// decodeTop decodes the file's one YAML document and returns its top-level
// mapping, or nil when there is none to read (the reason is reported). A
// second document is reported but does not stop the first being read.
func (p *parser) decodeTop(data []byte) *yaml.Node {
	if line, col, msg, bad := encodingProblem(data); bad {
		p.errs.add(&Error{File: p.file, Line: line, Column: col, Msg: "YAML syntax: " + msg})
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			p.errorf(nil, "", "empty file: want a scenario document starting with version: %d", Version)
		} else {
			p.syntaxError(data, err)
		}
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		p.errorf(&next, "", "a second YAML document: a scenario file holds one document")
	} else if !errors.Is(err, io.EOF) {
		p.syntaxError(data, err)
	}
	p.customTags(&root, 0)
	top := deref(root.Content[0])
	if top.Kind != yaml.MappingNode {
		p.errorf(top, "", "want a mapping with version, defaults, scenarios and matrix; got %s", describe(top))
		return nil
	}
	return top
}

// checkVersion reports a missing or unsupported version, and returns false
// only for an unsupported one: a file without a version is still read, so
// that its other problems are reported with it.
func (p *parser) checkVersion(top *yaml.Node, kvs []pair) bool {
	var version *yaml.Node
	for _, kv := range kvs {
		if kv.key.Value == "version" {
			version = deref(kv.val)
		}
	}
	switch {
	case version == nil:
		p.errorf(top, "version", "missing: the first line of a scenario file is version: %d", Version)
	case version.Kind != yaml.ScalarNode || version.Value != strconv.Itoa(Version):
		p.errorf(version, "version", "unsupported version %s: this provebench reads version %d", describe(version), Version)
		return false
	}
	return true
}

// body reads the top-level keys into a document.
func (p *parser) body(top *yaml.Node, kvs []pair) *document {
	doc := &document{file: p.file, defaults: layer{}}
	// nothing stays true unless a scenarios or matrix list has items, or
	// one of them is malformed (and reported as such).
	nothing := true
	for _, kv := range kvs {
		switch kv.key.Value {
		case "version":
		case "defaults":
			p.settingsBlock(kv.val, "defaults", doc.defaults, nil)
		case "scenarios":
			nothing = p.scenarioList(kv.val, doc) && nothing
		case "matrix":
			nothing = p.matrixList(kv.val, doc) && nothing
		default:
			p.unknownTopKey(kv.key)
		}
	}
	if nothing {
		p.errorf(top, "", "no scenarios: add a scenarios list or a matrix")
	}
	return doc
}

// scenarioList reads the scenarios list into doc, as long as the load is
// under its cap, and reports whether the list is well formed and empty.
func (p *parser) scenarioList(n *yaml.Node, doc *document) (empty bool) {
	items, ok := p.list(n, "scenarios")
	for i, item := range items {
		path := fmt.Sprintf("scenarios[%d]", i)
		if item != nil && p.countConfigs(item, path, 1) {
			doc.scenarios = append(doc.scenarios, p.scenario(item, path))
		}
	}
	return ok && len(items) == 0
}

// matrixList reads the matrix list into doc, and reports whether the list
// is well formed and empty.
func (p *parser) matrixList(n *yaml.Node, doc *document) (empty bool) {
	items, ok := p.list(n, "matrix")
	for i, item := range items {
		if item != nil {
			doc.matrices = append(doc.matrices, p.matrix(item, fmt.Sprintf("matrix[%d]", i)))
		}
	}
	return ok && len(items) == 0
}

// unknownTopKey reports a top-level key that is not one of the document's
// own: a setting written at the top instead of under defaults, a scenario
// or a matrix's base is said to be so, anything else is unknown.
func (p *parser) unknownTopKey(key *yaml.Node) {
	name := key.Value
	if fieldByPath(name) != nil || groupDocs[name] != "" {
		p.errorf(key, name, "%s belongs under defaults, a scenario, or a matrix's base", name)
		return
	}
	if where := belongsUnder("", name); where != "" {
		p.errorf(key, name, "%s belongs under %s in defaults, a scenario, or a matrix's base", name, where)
		return
	}
	p.unknown(key, name, name, []string{"version", "defaults", "scenarios", "matrix"})
}

// scenario reads one item of the scenarios list.
func (p *parser) scenario(n *yaml.Node, path string) *scenarioDecl {
	s := &scenarioDecl{node: n, path: path, settings: layer{}}
	p.settingsBlock(n, path, s.settings, map[string]func(key, val *yaml.Node){
		"name":        func(key, val *yaml.Node) { s.name, s.nameNode = p.name(val, path+".name") },
		"description": func(key, val *yaml.Node) { s.description = p.text(val, path+".description") },
	})
	if s.nameNode == nil {
		p.errorf(n, path+".name", "missing: every scenario needs a name")
	}
	return s
}

// matrix reads one item of the matrix list.
func (p *parser) matrix(n *yaml.Node, path string) *matrixDecl {
	m := &matrixDecl{node: n, path: path, base: layer{}}
	var axesNode *yaml.Node
	for _, kv := range p.pairs(n, path, 0) {
		switch kv.key.Value {
		case "name":
			m.name, m.nameNode = p.name(kv.val, path+".name")
		case "description":
			m.description = p.text(kv.val, path+".description")
		case "base":
			p.settingsBlock(kv.val, path+".base", m.base, nil)
		case "axes":
			axesNode = kv.val
			if !p.configs.over { // past the cap, a matrix's axes are not read
				m.axes = p.axes(kv.val, path+".axes")
			}
		default:
			if fieldByPath(kv.key.Value) != nil || groupDocs[kv.key.Value] != "" {
				p.errorf(kv.key, joinPath(path, kv.key.Value), "%s belongs under base (values every point shares) or axes (values swept)", kv.key.Value)
				continue
			}
			p.unknown(kv.key, joinPath(path, kv.key.Value), kv.key.Value, []string{"name", "description", "base", "axes"})
		}
	}
	if m.nameNode == nil {
		p.errorf(n, path+".name", "missing: every matrix needs a name, the prefix of its scenarios' names")
	}
	if axesNode == nil {
		p.errorf(n, path+".axes", "missing: a matrix sweeps at least one axis (field path: [values])")
	}
	for _, a := range m.axes {
		if l := m.base[a.field.path]; l != nil {
			p.errorf(l.node, l.path, "%s is swept by axes (line %d), so this value is never used; remove it", a.field.path, a.key.Line)
		}
	}
	points := 1
	for _, a := range m.axes {
		points *= max(1, len(a.values))
		if points > maxMatrixPoints {
			p.errorf(n, path, "more than %d points; split the sweep", maxMatrixPoints)
			m.axes = nil
			return m
		}
	}
	if len(m.axes) > 0 && !p.countConfigs(n, path, points) {
		m.axes = nil // never expanded
	}
	return m
}

// axes reads a matrix's axes: field path -> a list of values or a range.
func (p *parser) axes(n *yaml.Node, path string) []*axis {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping of field path to a list of values; got %s", describe(n))
		return nil
	}
	var axes []*axis
	kvs := p.pairs(n, path, 0)
	if len(kvs) == 0 {
		p.errorf(n, path, "empty: a matrix sweeps at least one axis (field path: [values])")
	}
	for _, kv := range kvs {
		name := kv.key.Value
		apath := path + "[" + name + "]"
		f := fieldByPath(name)
		if f == nil && isVarPath(name) {
			f = varField(name)
		}
		if f == nil {
			if groupDocs[name] != "" {
				p.errorf(kv.key, apath, "%s is a group; sweep one of its fields: %s", name, strings.Join(leafPaths(name), ", "))
			} else {
				p.unknown(kv.key, apath, name, leafPaths(""))
			}
			continue
		}
		a := &axis{field: f, key: kv.key, path: apath}
		vals := deref(kv.val)
		if vals.Kind == yaml.MappingNode {
			if a.values = p.rangeAxis(f, vals, apath); a.values != nil {
				axes = append(axes, a)
			}
			continue
		}
		if vals.Kind != yaml.SequenceNode {
			p.errorf(vals, apath, "want a list of values, such as [1, 4], or a range, such as {from: 4, to: 16, step: 2}; got %s", describe(vals))
			continue
		}
		if len(vals.Content) == 0 {
			p.errorf(vals, apath, "empty: an axis needs at least one value")
			continue
		}
		if len(vals.Content) > maxAxisValues {
			p.errorf(vals, apath, "%d values: more than %d in one axis", len(vals.Content), maxAxisValues)
			continue
		}
	values:
		for i, v := range vals.Content {
			l := p.leaf(f, v, fmt.Sprintf("%s[%d]", apath, i))
			for _, prev := range a.values {
				if l.val != nil && prev.val == l.val {
					p.errorf(l.node, l.path, "%s repeats the value %s (line %d)", l.text, prev.text, prev.node.Line)
					continue values // one point per value
				}
			}
			a.values = append(a.values, l)
		}
		axes = append(axes, a)
	}
	return axes
}

// settingsBlock reads a mapping of settings (fields and groups) into a
// layer. Keys in extra are handed to their functions instead.
func (p *parser) settingsBlock(n *yaml.Node, path string, into layer, extra map[string]func(key, val *yaml.Node)) {
	p.group(n, path, "", into, extra)
}

func (p *parser) group(n *yaml.Node, path, group string, into layer, extra map[string]func(key, val *yaml.Node)) {
	n = deref(n)
	if isNull(n) && extra == nil {
		return // an empty block (every line commented out) sets nothing
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping of settings; got %s", describe(n))
		return
	}
	for _, kv := range p.pairs(n, path, 0) {
		key := kv.key.Value
		if fn := extra[key]; fn != nil {
			fn(kv.key, kv.val)
			continue
		}
		full := joinPath(group, key)
		fpath := joinPath(path, key)
		switch {
		case group == "" && key == execKey:
			into[execKey] = p.execBlock(kv.val, fpath)
		case group == "" && key == varsKey:
			p.vars(kv.val, fpath, into)
		case fieldByPath(full) != nil:
			into[full] = p.leaf(fieldByPath(full), kv.val, fpath)
		case groupDocs[full] != "":
			p.group(kv.val, fpath, full, into, nil)
		case belongsUnder(group, key) != "":
			p.errorf(kv.key, fpath, "%s belongs under %s", key, belongsUnder(group, key))
		default:
			names := childNames(group)
			for k := range extra {
				names = append(names, k)
			}
			p.unknown(kv.key, fpath, key, names)
		}
	}
}

// leaf reads one field's value.
func (p *parser) leaf(f *field, n *yaml.Node, path string) *leaf {
	n = deref(n)
	l := &leaf{field: f, node: n, path: path, text: n.Value}
	switch {
	case n.Kind != yaml.ScalarNode:
		p.errorf(n, path, "want %s; got %s", kindText(f), describe(n))
	case isNull(n):
		p.errorf(n, path, "missing value: want %s", kindText(f))
	case isQuotedNumber(f, n):
		// The JSON Schema types these fields as numbers and booleans, so
		// a string is refused here too: the two must agree.
		p.errorf(n, path, "%q is a string (it is quoted); want %s: write it without quotes", n.Value, kindText(f))
	default:
		v, err := f.parse(n.Value)
		if err != nil {
			p.errorf(n, path, "%v", err)
		} else {
			l.val = v
		}
	}
	return l
}

// isQuotedNumber reports whether n is a string (quoted, or tagged !!str)
// holding what the field takes as a number or boolean: "2" for an integer,
// "false" for a boolean, "16384" for constraints (whose string form is
// 2^k). Unquoted text such as two or yes is not: its parse error says more.
func isQuotedNumber(f *field, n *yaml.Node) bool {
	if n.Tag != "!!str" {
		return false
	}
	switch f.kind {
	case kindInt, kindUint, kindBool, kindFloat:
		var probe yaml.Node
		if yaml.Unmarshal([]byte(n.Value), &probe) != nil || len(probe.Content) != 1 {
			return false
		}
		tag := probe.Content[0].Tag
		return tag == "!!int" || tag == "!!float" || tag == "!!bool"
	case kindConstraints:
		_, err := strconv.ParseInt(n.Value, 10, 64)
		return err == nil
	}
	return false
}

// name reads a scenario or matrix name.
func (p *parser) name(n *yaml.Node, path string) (string, *yaml.Node) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || isNull(n) {
		p.errorf(n, path, "want a name; got %s", describe(n))
		return "", n
	}
	if !nameRE.MatchString(n.Value) {
		p.errorf(n, path, "%q: a name is letters, digits and . _ + - (no spaces, '/' or '='), starting with a letter or digit", n.Value)
	}
	return n.Value, n
}

// text reads a free-text scalar.
func (p *parser) text(n *yaml.Node, path string) string {
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, path, "want text; got %s", describe(n))
		return ""
	}
	return n.Value
}

// list reads a sequence of mappings (null is an empty list); ok is false
// when n is not a list at all. Items that are not mappings are reported and
// come back nil, so the indexes of the others still match the file.
func (p *parser) list(n *yaml.Node, path string) (items []*yaml.Node, ok bool) {
	n = deref(n)
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, path, "want a list (items starting with -); got %s", describe(n))
		return nil, false
	}
	items = make([]*yaml.Node, len(n.Content))
	for i, item := range n.Content {
		item = deref(item)
		if item.Kind != yaml.MappingNode {
			p.errorf(item, fmt.Sprintf("%s[%d]", path, i), "want a mapping; got %s", describe(item))
			continue
		}
		items[i] = item
	}
	return items, true
}

type pair struct{ key, val *yaml.Node }

// pairs returns a mapping's key/value pairs in order, reporting duplicate
// and non-scalar keys, and adds the pairs of YAML merge keys (<<: *anchor)
// for keys the mapping does not set itself.
func (p *parser) pairs(n *yaml.Node, path string, depth int) []pair {
	return p.mergedPairs(n, path, depth, make(map[*yaml.Node]bool))
}

// mergedPairs is pairs, merging each source mapping once: a source merged
// again adds no key, and merging it again would make nested merge lists
// (<<: [*a, *a, ...] at every level) cost exponential time.
func (p *parser) mergedPairs(n *yaml.Node, path string, depth int, merged map[*yaml.Node]bool) []pair {
	var out []pair
	var merges []*yaml.Node
	seen := make(map[string]*yaml.Node)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		switch {
		case k.Kind == yaml.ScalarNode && k.Tag == "!!merge":
			merges = append(merges, v)
		case k.Kind != yaml.ScalarNode:
			p.errorf(k, path, "a key must be a plain name; got %s", describe(k))
		case seen[k.Value] != nil:
			p.errorf(k, joinPath(path, k.Value), "duplicate key (first at line %d)", seen[k.Value].Line)
		default:
			seen[k.Value] = k
			out = append(out, pair{k, v})
		}
	}
	for _, m := range merges {
		m = deref(m)
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			src = deref(src)
			if src.Kind != yaml.MappingNode {
				p.errorf(src, path, "a merge key (<<) takes a mapping or a list of mappings; got %s", describe(src))
				continue
			}
			if depth >= maxMergeDepth {
				p.errorf(src, path, "merge keys (<<) nested more than %d deep", maxMergeDepth)
				continue
			}
			if merged[src] {
				continue
			}
			merged[src] = true
			for _, kv := range p.mergedPairs(src, path, depth+1, merged) {
				if seen[kv.key.Value] == nil {
					seen[kv.key.Value] = kv.key
					out = append(out, kv)
				}
			}
		}
	}
	return out
}

// unknown reports a key, at path, that is not part of the format,
// suggesting the closest valid name.
func (p *parser) unknown(key *yaml.Node, path, name string, valid []string) {
	msg := "unknown field"
	if s := closest(name, valid); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	} else if len(valid) > 0 {
		msg += "; valid here: " + strings.Join(valid, ", ")
	}
	p.errorf(key, path, "%s", msg)
}

// closest returns the valid name nearest to name by edit distance, if it
// is near enough to be a likely typo.
func closest(name string, valid []string) string {
	best, bestD := "", len(name)/3+2
	for _, v := range valid {
		if d := editDistance(strings.ToLower(name), strings.ToLower(v)); d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// customTags reports each node under n that carries an application tag
// (!hold {strategy: hold}): the format gives no tag a meaning, and one
// read as its plain value would be a setting the writer did not mean.
// depth bounds the walk as deref bounds aliases (aliases are not
// followed: their anchors are walked where they stand).
func (p *parser) customTags(n *yaml.Node, depth int) {
	if n == nil || depth > 1000 {
		return
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") && n.Kind != yaml.AliasNode {
		p.errorf(n, "", "YAML tag %s: a scenario file gives tags no meaning; remove it", n.Tag)
	}
	for _, c := range n.Content {
		p.customTags(c, depth+1)
	}
}

// deref follows aliases (*anchor) to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// describe names a node's type for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "an unexpected YAML node"
}

// kindText says what a field's values look like.
func kindText(f *field) string {
	switch f.kind {
	case kindInt, kindUint:
		return "an integer"
	case kindConstraints:
		return "a power of two such as 2^20"
	case kindSize:
		return "a size such as 512MiB"
	case kindDuration:
		return "a duration such as 500ms"
	case kindBool:
		return "true or false"
	case kindFloat:
		return "a number"
	case kindEnum:
		return "one of " + strings.Join(f.enum, ", ")
	case kindString:
		return "text"
	}
	return "a value"
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
