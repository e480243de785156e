package scenarios

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// validator checks a document against the subset of JSON Schema that
// Schema emits. It refuses keywords it does not know, so the generator
// cannot start relying on one this test does not check.
type validator struct {
	t    *testing.T
	root map[string]any
}

var annotations = []string{"$schema", "$id", "$defs", "title", "description", "default"}

func (v *validator) check(s map[string]any, x any, path string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	for k := range s {
		switch k {
		case "$ref", "type", "enum", "const", "pattern", "anyOf", "properties", "additionalProperties",
			"required", "items", "minItems", "minProperties", "minimum", "exclusiveMinimum", "maximum", "patternProperties":
		default:
			if !slices.Contains(annotations, k) {
				v.t.Fatalf("schema keyword %q at %s: the test validator does not check it", k, path)
			}
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		def, _ := v.root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok || def == nil {
			v.t.Fatalf("unresolvable $ref %q", ref)
		}
		errs = append(errs, v.check(def, x, path)...)
	}
	if typ, ok := s["type"].(string); ok && !hasType(x, typ) {
		fail("want %s, got %T", typ, x)
		return errs
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return jsonEqual(e, x) }) {
		fail("%v not in enum", x)
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, x) {
		fail("%v is not %v", x, c)
	}
	if pat, ok := s["pattern"].(string); ok {
		if str, isStr := x.(string); isStr && !regexp.MustCompile(pat).MatchString(str) {
			fail("%q does not match %s", str, pat)
		}
	}
	if anyOf, ok := s["anyOf"].([]any); ok {
		matched := false
		for _, sub := range anyOf {
			if len(v.check(sub.(map[string]any), x, path)) == 0 {
				matched = true
			}
		}
		if !matched {
			fail("%v matches none of anyOf", x)
		}
	}
	if n, isNum := number(x); isNum {
		if m, ok := s["minimum"].(float64); ok && n < m {
			fail("%v < minimum %v", n, m)
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok && n <= m {
			fail("%v <= exclusiveMinimum %v", n, m)
		}
		if m, ok := s["maximum"].(float64); ok && n > m {
			fail("%v > maximum %v", n, m)
		}
	}
	if obj, isObj := x.(map[string]any); isObj {
		props, _ := s["properties"].(map[string]any)
		patterns, _ := s["patternProperties"].(map[string]any)
	props:
		for k, val := range obj {
			if sub, ok := props[k].(map[string]any); ok {
				errs = append(errs, v.check(sub, val, path+"."+k)...)
				continue
			}
			for pat, sub := range patterns {
				if regexp.MustCompile(pat).MatchString(k) {
					errs = append(errs, v.check(sub.(map[string]any), val, path+"."+k)...)
					continue props
				}
			}
			switch extra := s["additionalProperties"].(type) {
			case bool:
				if !extra {
					fail("property %q not allowed", k)
				}
			case map[string]any: // a map: every value has this schema
				errs = append(errs, v.check(extra, val, path+"."+k)...)
			}
		}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					fail("missing %q", r)
				}
			}
		}
		if m, ok := s["minProperties"].(float64); ok && float64(len(obj)) < m {
			fail("fewer than %v properties", m)
		}
	}
	if arr, isArr := x.([]any); isArr {
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range arr {
				errs = append(errs, v.check(items, it, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
		if m, ok := s["minItems"].(float64); ok && float64(len(arr)) < m {
			fail("fewer than %v items", m)
		}
	}
	return errs
}

func hasType(x any, typ string) bool {
	switch typ {
	case "object":
		_, ok := x.(map[string]any)
		return ok
	case "array":
		_, ok := x.([]any)
		return ok
	case "string":
		_, ok := x.(string)
		return ok
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "number":
		_, ok := number(x)
		return ok
	case "integer":
		n, ok := number(x)
		return ok && n == float64(int64(n))
	}
	panic("unknown type " + typ)
}

func number(x any) (float64, bool) {
	switch n := x.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func jsonEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return a == b
}

// schemaOf decodes Schema().
func schemaOf(t *testing.T) *validator {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatalf("Schema() is not JSON: %v", err)
	}
	return &validator{t: t, root: root}
}

// validate checks a YAML document against the schema.
func (v *validator) validate(doc string) []string {
	var x any
	if err := yaml.Unmarshal([]byte(doc), &x); err != nil {
		v.t.Fatalf("test document: %v", err)
	}
	return v.check(v.root, x, "$")
}

func (v *validator) def(name string) map[string]any {
	return v.root["$defs"].(map[string]any)[name].(map[string]any)
}

// leaves lists the dotted paths of the settings an object schema allows,
// following references to groups.
func (v *validator) leaves(obj map[string]any, prefix string) []string {
	var out []string
	for name, p := range obj["properties"].(map[string]any) {
		if ref, ok := p.(map[string]any)["$ref"].(string); ok {
			out = append(out, v.leaves(v.def(strings.TrimPrefix(ref, "#/$defs/")), prefix+name+".")...)
		} else {
			out = append(out, prefix+name)
		}
	}
	sort.Strings(out)
	return out
}

// schemaDefaults maps every field path to its schema "default".
func (v *validator) schemaDefaults(obj map[string]any, prefix string, into map[string]any) {
	for name, p := range obj["properties"].(map[string]any) {
		pm := p.(map[string]any)
		if ref, ok := pm["$ref"].(string); ok {
			v.schemaDefaults(v.def(strings.TrimPrefix(ref, "#/$defs/")), prefix+name+".", into)
		} else {
			into[prefix+name] = pm["default"]
		}
	}
}

// entry writes a field path and value as a YAML flow entry, nesting its
// groups: pipeline.pacer.kp, 0.5 -> pipeline: {pacer: {kp: 0.5}}.
func entry(path string, value any) string {
	b, _ := json.Marshal(value) // JSON scalars are YAML scalars
	s := string(b)
	segs := strings.Split(path, ".")
	for i := len(segs) - 1; i > 0; i-- {
		s = "{" + segs[i] + ": " + s + "}"
	}
	return segs[0] + ": " + s
}

func TestSchemaShape(t *testing.T) {
	v := schemaOf(t)
	if v.root["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", v.root["$schema"])
	}
	// Every object, everywhere, refuses unknown properties and says what
	// it is for.
	var walk func(x any, path string)
	walk = func(x any, path string) {
		switch n := x.(type) {
		case map[string]any:
			_, mapOf := n["additionalProperties"].(map[string]any) // a map (env, vars): its values' schema
			if n["type"] == "object" && n["additionalProperties"] != false && !mapOf {
				t.Errorf("%s: object without additionalProperties: false", path)
			}
			for k, c := range n {
				walk(c, path+"/"+k)
			}
		case []any:
			for i, c := range n {
				walk(c, fmt.Sprintf("%s/%d", path, i))
			}
		}
	}
	walk(v.root, "#")
	for name, p := range v.def("settings")["properties"].(map[string]any) {
		if _, ref := p.(map[string]any)["$ref"]; !ref && p.(map[string]any)["description"] == nil {
			t.Errorf("settings.%s has no description", name)
		}
	}
}

// TestSchemaAgreesWithLoader: the schema lists exactly the fields the
// loader accepts, with the loader's defaults, in every place a setting can
// appear.
func TestSchemaAgreesWithLoader(t *testing.T) {
	v := schemaOf(t)
	var loaderFields []string
	for _, f := range fields {
		loaderFields = append(loaderFields, f.path)
	}
	sort.Strings(loaderFields)

	// The exec block and vars are read by exec.go, not the field table;
	// TestSchemaExec compares the exec block's keys (vars holds the user's
	// own names).
	builtin := func(paths []string) []string {
		return slices.DeleteFunc(paths, func(p string) bool {
			return strings.HasPrefix(p, execKey+".") || p == varsKey
		})
	}
	settings := builtin(v.leaves(v.def("settings"), ""))
	if !slices.Equal(settings, loaderFields) {
		t.Errorf("schema settings:\n  %v\nloader fields:\n  %v", settings, loaderFields)
	}
	scenario := builtin(v.leaves(v.def("scenario"), ""))
	if want := slices.Sorted(slices.Values(append(slices.Clone(loaderFields), "name", "description"))); !slices.Equal(scenario, want) {
		t.Errorf("schema scenario:\n  %v\nwant:\n  %v", scenario, want)
	}
	axes := slices.Sorted(maps.Keys(v.def("matrix")["properties"].(map[string]any)["axes"].(map[string]any)["properties"].(map[string]any)))
	if !slices.Equal(axes, loaderFields) {
		t.Errorf("schema axes:\n  %v\nloader fields:\n  %v", axes, loaderFields)
	}

	// Each field, set to the schema's default in each place it can be
	// written, passes both the schema and the loader, and gives the same
	// configuration as leaving it out: the schema's default is the
	// loader's.
	defaults := map[string]any{}
	v.schemaDefaults(v.def("settings"), "", defaults)
	base := load(t, header+"scenarios: [{name: a}]\n")[0]
	for _, path := range loaderFields {
		def := defaults[path]
		other := "workload.seed: [1]" // a second axis at its default value
		if path == "workload.seed" {
			other = "repeats: [5]"
		}
		val, _ := json.Marshal(def)
		for _, doc := range []string{
			header + "defaults: {" + entry(path, def) + "}\nscenarios: [{name: a}]\n",
			header + "scenarios: [{name: a, " + entry(path, def) + "}]\n",
			header + "matrix: [{name: a, base: {" + entry(path, def) + "}, axes: {" + other + "}}]\n",
			header + "matrix: [{name: a, axes: {" + path + ": [" + string(val) + "]}}]\n",
		} {
			if errs := v.validate(doc); len(errs) > 0 {
				t.Errorf("%s: schema rejects %q: %v", path, doc, errs)
			}
			specs, err := LoadBytes("test.yaml", []byte(doc))
			if err != nil {
				t.Errorf("%s: loader rejects %q: %v", path, doc, err)
				continue
			}
			got := specs[0]
			got.Name, got.Source, got.Labels = base.Name, base.Source, base.Labels
			if !reflect.DeepEqual(got, base) {
				t.Errorf("%s: the schema default %s changes the configuration:\n  %+v\nwant\n  %+v", path, val, got, base)
			}
		}
	}

	// An unknown property is refused by both, at every level.
	for _, doc := range []string{
		header + "bogus: 1\nscenarios: [{name: a}]\n",
		header + "defaults: {bogus: 1}\nscenarios: [{name: a}]\n",
		header + "defaults: {workload: {bogus: 1}}\nscenarios: [{name: a}]\n",
		header + "defaults: {pipeline: {pacer: {bogus: 1}}}\nscenarios: [{name: a}]\n",
		header + "scenarios: [{name: a, bogus: 1}]\n",
		header + "matrix: [{name: a, bogus: 1, axes: {repeats: [1]}}]\n",
		header + "matrix: [{name: a, base: {pipeline: {bogus: 1}}, axes: {repeats: [1]}}]\n",
		header + "matrix: [{name: a, axes: {pipeline.bogus: [1]}}]\n",
	} {
		if errs := v.validate(doc); len(errs) == 0 {
			t.Errorf("schema accepts %q", doc)
		}
		if es := loadErrors(t, doc); !strings.Contains(es.Error(), "unknown field") {
			t.Errorf("loader: %v", es)
		}
	}
}

// TestSchemaExec: the exec block's schema (execDefs) and its parser
// (execKeys, and the readers of its nested blocks) know the same keys, at
// the top of the block and in every nested block the schema describes:
// files, daemon, rules, status and prometheus. The parser's keys are the
// ones its message for an unknown key lists (at the top, execKeys' names),
// and each key the schema names must be one the parser reads.
func TestSchemaExec(t *testing.T) {
	v := schemaOf(t)
	const exec = "scenarios[0].exec"
	blocks := []execKeyProbe{{path: exec, doc: "{%s: 1}", schema: v.def(execKey)}}
	for _, name := range slices.Sorted(maps.Keys(v.def(execKey)["properties"].(map[string]any))) {
		p := v.def(execKey)["properties"].(map[string]any)[name].(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			p = v.def(strings.TrimPrefix(ref, "#/$defs/"))
		}
		items, _ := p["items"].(map[string]any)
		switch {
		case p["type"] == "object" && p["properties"] != nil:
			blocks = append(blocks, execKeyProbe{path: exec + "." + name, doc: "{command: [x], " + name + ": {%s: 1}}", schema: p})
		case p["type"] == "array" && items["properties"] != nil:
			blocks = append(blocks, execKeyProbe{path: exec + "." + name + "[0]", doc: "{command: [x], " + name + ": [{%s: 1}]}", schema: items})
		}
	}
	var paths []string
	for _, b := range blocks {
		paths = append(paths, b.path)
	}
	for _, want := range []string{"files[0]", "daemon", "rules[0]", "status", "prometheus"} {
		if !slices.Contains(paths, exec+"."+want) {
			t.Errorf("the schema describes no keys of exec.%s (blocks found: %v)", want, paths)
		}
	}
	for _, b := range blocks {
		schemaKeys := slices.Sorted(maps.Keys(b.schema["properties"].(map[string]any)))
		parserKeys := slices.Sorted(slices.Values(b.parserKeys(t)))
		if len(schemaKeys) == 0 || !slices.Equal(schemaKeys, parserKeys) {
			t.Errorf("%s: the schema's keys\n  %v\nthe parser's\n  %v", b.path, schemaKeys, parserKeys)
		}
		for _, key := range schemaKeys {
			if b.unknown(key) {
				t.Errorf("%s.%s: in the schema, but the parser refuses it as an unknown field", b.path, key)
			}
		}
	}
}

// execKeyProbe loads documents with one key in one block of an exec block
// and reads what the loader says of that key.
type execKeyProbe struct {
	path   string         // the block's path in the loader's messages
	doc    string         // the exec block, %s where the key goes
	schema map[string]any // the block's object schema
}

func (b execKeyProbe) load(key string) error {
	_, err := LoadBytes("test.yaml", []byte(header+"scenarios: [{name: a, exec: "+fmt.Sprintf(b.doc, key)+"}]\n"))
	return err
}

// parserKeys are the keys the parser lists for an unknown key of the
// block: one no valid key is near, so that the message lists them all
// instead of suggesting one.
func (b execKeyProbe) parserKeys(t *testing.T) []string {
	t.Helper()
	const bogus = "qqqqqqqqqqqqqqqqqqqqqqqq"
	err := b.load(bogus)
	m := regexp.MustCompile(regexp.QuoteMeta(b.path+"."+bogus) + `: unknown field; valid here: (.+)`).FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		t.Fatalf("%s: the loader does not list the valid keys for an unknown one: %v", b.path, err)
	}
	return strings.Split(m[1], ", ")
}

// unknown reports whether the parser refuses key in the block as unknown
// (the value 1 may be refused; that is not this test's concern).
func (b execKeyProbe) unknown(key string) bool {
	err := b.load(key)
	return err != nil && strings.Contains(err.Error(), b.path+"."+key+": unknown field")
}

// TestSchemaAndLoaderAgreeOnValues runs values through both.
func TestSchemaAndLoaderAgreeOnValues(t *testing.T) {
	v := schemaOf(t)
	tests := []struct {
		path  string
		value string // as written in YAML
		ok    bool
	}{
		{"memory_limit", "16GiB", true},
		{"memory_limit", "1.5GB", true},
		{"memory_limit", "2^30", true},
		{"memory_limit", "1073741824", true},
		{"memory_limit", "0", true},
		{"memory_limit", "16G", false},
		{"memory_limit", "16 GiB", false},
		{"memory_limit", "-1", false},
		{"workload.constraints", "2^12", true},
		{"workload.constraints", "4096", true},
		{"workload.constraints", "1000", false},
		{"workload.constraints", "2^30", false},
		{"workload.constraints", "2^4", false},
		{"sample_interval", "10ms", true},
		{"sample_interval", "1m30s", true},
		{"sample_interval", "10 ms", false},
		{"sample_interval", "10", false},
		{"backend", "cuda", true},
		{"backend", "gpu", false},
		{"verify", "false", true},
		{"verify", "yes", false},
		{"repeats", "1", true},
		{"repeats", "0", false},
		{"repeats", "1.5", false},
		{"pipeline.pacer.kp", "0", true},
		{"pipeline.pacer.kp", "-1", false},
		{"pipeline.pacer.target_depth", "0.5", true},
		{"pipeline.pacer.target_depth", "0", false},
		{"workload.synthesis_rounds", "10000", true},
		{"workload.synthesis_rounds", "10001", false},
		{"pipeline.channel_capacity", "0", false},
		// Issue 13, item 1: quoted numbers and booleans are strings.
		{"workload.proofs", `"2"`, false},
		{"verify", `"false"`, false},
		{"pipeline.pacer.kp", `'0.5'`, false},
		{"workload.constraints", `"4096"`, false},
		{"workload.constraints", `"2^12"`, true},
		{"memory_limit", `"1073741824"`, true},
		{"sample_interval", `"10ms"`, true},
	}
	for _, tt := range tests {
		segs := strings.Split(tt.path, ".")
		val := tt.value
		for i := len(segs) - 1; i >= 0; i-- {
			val = "{" + segs[i] + ": " + val + "}"
		}
		doc := header + "defaults: " + val + "\nscenarios: [{name: a}]\n"
		schemaOK := len(v.validate(doc)) == 0
		_, err := LoadBytes("test.yaml", []byte(doc))
		if schemaOK != tt.ok || (err == nil) != tt.ok {
			t.Errorf("%s: %s: schema accepts %v, loader error %v; want ok=%v", tt.path, tt.value, schemaOK, err, tt.ok)
		}
	}
}

func TestEmbeddedFilesMatchSchema(t *testing.T) {
	v := schemaOf(t)
	for _, name := range EmbeddedNames() {
		data, err := Embedded.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		if errs := v.validate(string(data)); len(errs) > 0 {
			t.Errorf("%s.yaml: %v", name, errs)
		}
	}
}
