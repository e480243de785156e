package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/provebench/provebench/gpu/shape"
)

// durationPattern matches what time.ParseDuration accepts, for the JSON
// Schema (the loader calls ParseDuration itself; a test keeps the two in
// step).
const durationPattern = `^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

// schemaID names the schema; editors use it only as an identifier.
const schemaID = "https://github.com/provebench/provebench/scenarios/schema.json"

// Schema returns a JSON Schema (draft 2020-12) of the scenario format, for
// editor completion and checking (yaml-language-server and the like). It is
// generated from the same field table the loader reads, so the two accept
// the same fields. Some rules only the loader checks: those that join
// fields (a budget must hold one dataset at the scenario's size), and exact
// limits of durations (the schema states them in the descriptions).
func Schema() []byte {
	settings := properties("")
	scenario := properties("")
	for _, props := range []map[string]any{settings, scenario} {
		props[execKey] = map[string]any{"$ref": "#/$defs/exec"}
		props[varsKey] = varsSchema()
	}
	scenario["name"] = nameSchema("Unique name of the scenario.")
	scenario["description"] = map[string]any{"type": "string", "description": "What the scenario shows."}

	axes := map[string]any{}
	for _, f := range fields {
		axes[f.path] = axisSchema(f)
	}

	defs := map[string]any{
		"settings": object("Settings; every one is optional and overrides the built-in default.", settings, nil),
		"scenario": object("An explicit scenario: a name and settings that override the file's defaults.", scenario, []string{"name"}),
		"matrix": object("A cartesian sweep: one scenario per combination of the axes' values, named name/axis=value/...; at most "+strconv.Itoa(maxMatrixPoints)+" points, an axis at most "+strconv.Itoa(maxAxisValues)+" values.", map[string]any{
			"name":        nameSchema("Prefix of the derived scenario names."),
			"description": map[string]any{"type": "string", "description": "What the sweep shows; given to every point."},
			"base":        map[string]any{"$ref": "#/$defs/settings", "description": "Settings for every point, over the file's defaults."},
			"axes": map[string]any{
				"type":                 "object",
				"description":          "Field path -> the values to sweep, a list or a range ({from, to, step} or {from, to, times}); every combination is one scenario.",
				"minProperties":        1,
				"additionalProperties": false,
				"properties":           axes,
				"patternProperties": map[string]any{
					varAxisPattern: map[string]any{"anyOf": []any{
						map[string]any{"type": "array", "minItems": 1, "description": "Values of a user variable to sweep.", "items": scalarSchema()},
						axisSchema(&field{path: "a user variable", kind: kindInt})["anyOf"].([]any)[1],
					}, "description": "Values of a user variable to sweep: a list, or a range of integers."},
				},
			},
		}, []string{"name", "axes"}),
	}
	for name, def := range execDefs() {
		defs[name] = def
	}
	for group := range groupDocs {
		defs[group] = object(groupDocs[group], properties(group), nil)
	}

	doc := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  schemaID,
		"title":                "provebench scenario file",
		"description":          "Pipeline configurations for provebench to run: defaults, explicit scenarios and matrix sweeps. One run (all its files together) defines at most " + strconv.Itoa(maxConfigurations) + " configurations, scenarios and matrix points counted together.",
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"version"},
		"properties": map[string]any{
			"version":   map[string]any{"const": Version, "description": "Version of the scenario format."},
			"defaults":  map[string]any{"$ref": "#/$defs/settings", "description": "Settings applied to every scenario and matrix point of the file."},
			"scenarios": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/scenario"}},
			"matrix":    map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/matrix"}},
		},
		"$defs": defs,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep -> and < readable in descriptions
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		panic(fmt.Sprintf("scenarios: encoding the schema: %v", err)) // only plain values above
	}
	return b.Bytes()
}

// properties is the schema of the settings directly under a group: its
// fields, and references to its sub-groups.
func properties(group string) map[string]any {
	props := map[string]any{}
	for _, name := range childNames(group) {
		full := joinPath(group, name)
		if f := fieldByPath(full); f != nil {
			s := valueSchema(f)
			s["description"] = fieldDescription(f)
			s["default"] = defaultValue(f)
			props[name] = s
		} else {
			props[name] = map[string]any{"$ref": "#/$defs/" + full}
		}
	}
	return props
}

func object(desc string, props map[string]any, required []string) map[string]any {
	o := map[string]any{
		"type":                 "object",
		"description":          desc,
		"additionalProperties": false,
		"properties":           props,
	}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func nameSchema(desc string) map[string]any {
	return map[string]any{"type": "string", "pattern": namePattern, "description": desc}
}

// axisSchema is the schema of one axis: a list of the field's values, or,
// for numbers, sizes and durations, a range. The loader alone checks that
// a range runs upwards and takes step or times, not both.
func axisSchema(f *field) map[string]any {
	list := map[string]any{
		"type":        "array",
		"minItems":    1,
		"description": "Values of " + f.path + " to sweep.",
		"items":       valueSchema(f),
	}
	props := map[string]any{
		"from": withDescription(valueSchema(f), "First value."),
		"to":   withDescription(valueSchema(f), "Last value, included when the steps land on it."),
	}
	switch f.kind {
	case kindInt, kindSize, kindDuration:
		props["times"] = map[string]any{"type": "integer", "minimum": 2, "description": "Factor between successive values (a geometric range)."}
	case kindConstraints:
		props["times"] = map[string]any{"type": "integer", "minimum": 2, "description": "Factor between successive values: a power of two keeps them powers of two."}
	case kindFloat:
		props["times"] = map[string]any{"type": "number", "exclusiveMinimum": 1, "description": "Factor between successive values (a geometric range)."}
	default:
		return list
	}
	if f.kind != kindConstraints {
		step := valueSchema(&field{kind: f.kind})
		props["step"] = withDescription(step, "Difference between successive values (an arithmetic range); greater than 0.")
	}
	rng := object(fmt.Sprintf("A range of %s: from, to, and step or times; at most %d values.", f.path, maxAxisValues), props, []string{"from", "to"})
	rng["anyOf"] = []any{map[string]any{"required": []string{"step"}}, map[string]any{"required": []string{"times"}}}
	return map[string]any{"anyOf": []any{list, rng}, "description": "Values of " + f.path + " to sweep: a list, or a range."}
}

func withDescription(s map[string]any, desc string) map[string]any {
	s["description"] = desc
	return s
}

// valueSchema is the schema of one value of a field.
func valueSchema(f *field) map[string]any {
	s := map[string]any{}
	switch f.kind {
	case kindInt, kindFloat:
		s["type"] = "integer"
		if f.kind == kindFloat {
			s["type"] = "number"
		}
		if f.lo.set {
			if f.lo.exclusive {
				s["exclusiveMinimum"] = f.lo.v
			} else {
				s["minimum"] = f.lo.v
			}
		}
		if f.hi.set {
			s["maximum"] = f.hi.v
		}
	case kindUint:
		s["type"] = "integer"
		s["minimum"] = 0
	case kindConstraints:
		var values []any
		for k := shape.MinLogConstraints; k <= shape.MaxLogConstraints; k++ {
			values = append(values, fmt.Sprintf("2^%d", k))
		}
		for k := shape.MinLogConstraints; k <= shape.MaxLogConstraints; k++ {
			values = append(values, 1<<k)
		}
		s["enum"] = values
	case kindSize:
		s["anyOf"] = []any{
			map[string]any{"type": "integer", "minimum": 0},
			map[string]any{"type": "string", "pattern": sizePattern},
		}
	case kindDuration:
		s["type"] = "string"
		s["pattern"] = durationPattern
	case kindBool:
		s["type"] = "boolean"
	case kindEnum:
		s["type"] = "string"
		s["enum"] = f.enum
	}
	return s
}

// fieldDescription is the field's doc, plus the limits the schema cannot
// express itself.
func fieldDescription(f *field) string {
	d := f.doc
	if f.kind == kindDuration && f.lo.set {
		if f.lo.exclusive {
			d += fmt.Sprintf(" Must be greater than %s.", f.format(f.lo.v))
		} else {
			d += fmt.Sprintf(" At least %s.", f.format(f.lo.v))
		}
	}
	return strings.TrimSpace(d)
}

// defaultValue is the built-in default as YAML reads it: a number, boolean
// or string, as the user would write it.
func defaultValue(f *field) any {
	var v any
	if err := yaml.Unmarshal([]byte(f.def), &v); err != nil {
		panic(fmt.Sprintf("scenarios: default of %s: %v", f.path, err))
	}
	return v
}
