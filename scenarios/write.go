package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/provebench/provebench/spec"
)

// Marshal writes one configuration as a standalone scenario file (version
// 1) that Load reads back to the same spec: every setting explicit, built-in
// defaults included, so the file means the same whatever defaults a later
// provebench has. A matrix point is written as a matrix of one point, its
// axes holding its one value each, so it keeps its name and labels
// (sweep/strategy=hold/channel_capacity=4) and its results line up with the
// sweep it came from; an explicit scenario is written as one. comment
// heads the file, one "# " line per line. Exec scenarios are not written.
func Marshal(spec *spec.Spec, comment string) ([]byte, error) {
	if spec.IsExec() {
		return nil, fmt.Errorf("scenario %s runs an external command: writing exec scenarios is not supported", spec.Name)
	}
	name := spec.Name
	if spec.File != "" {
		name = strings.TrimPrefix(name, spec.File+":")
	}
	var item *yaml.Node
	var err error
	if len(spec.Labels) == 0 {
		item, err = scenarioNode(spec, name)
	} else {
		item, err = matrixNode(spec, name)
	}
	if err != nil {
		return nil, err
	}
	list := "scenarios"
	if len(spec.Labels) > 0 {
		list = "matrix"
	}
	doc := mapping()
	add(doc, "version", scalar(strconv.Itoa(Version)))
	add(doc, list, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{item}})
	doc.HeadComment = comment

	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", spec.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", spec.Name, err)
	}
	if err := sameSpec(spec, name, b.Bytes()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// scenarioNode is an explicit scenario: its name, description and every
// setting.
func scenarioNode(spec *spec.Spec, name string) (*yaml.Node, error) {
	n := mapping()
	add(n, "name", scalar(name))
	if spec.Description != "" {
		add(n, "description", text(spec.Description))
	}
	settings(n, spec, nil)
	return n, nil
}

// matrixNode is a matrix of one point: every setting in its base but the
// swept ones, which are its axes, in the order the point's name lists them.
func matrixNode(spec *spec.Spec, name string) (*yaml.Node, error) {
	parts := strings.Split(name, "/")
	axes := mapping()
	swept := make(map[string]bool)
	for _, part := range parts[1:] {
		key, value, _ := strings.Cut(part, "=")
		path := ""
		for p, v := range spec.Labels {
			if v == value && (p == key || strings.HasSuffix(p, "."+key)) && !swept[p] {
				path = p
			}
		}
		if path == "" {
			return nil, fmt.Errorf("scenario %s: no label matches %s (labels %v)", spec.Name, part, spec.Labels)
		}
		swept[path] = true
		add(axes, path, &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{scalar(value)}})
	}
	if len(swept) != len(spec.Labels) {
		return nil, fmt.Errorf("scenario %s: its name does not list every label (%v)", spec.Name, spec.Labels)
	}
	n := mapping()
	add(n, "name", scalar(parts[0]))
	if spec.Description != "" {
		add(n, "description", text(spec.Description))
	}
	base := mapping()
	settings(base, spec, swept)
	add(n, "base", base)
	add(n, "axes", axes)
	return n, nil
}

// settings adds every field of spec but the skipped ones to n, nested by
// group in the order of the field table, and the spec's variables.
func settings(n *yaml.Node, spec *spec.Spec, skip map[string]bool) {
	for _, f := range fields {
		if skip[f.path] {
			continue
		}
		segs := strings.Split(f.path, ".")
		parent := n
		for _, g := range segs[:len(segs)-1] {
			parent = child(parent, g)
		}
		add(parent, segs[len(segs)-1], scalar(f.write(f.get(spec))))
	}
	for _, name := range slices.Sorted(maps.Keys(spec.Vars)) {
		if !skip[varsKey+"."+name] {
			add(child(n, varsKey), name, text(spec.Vars[name]))
		}
	}
}

// write writes a value of the field as the loader reads it back exactly.
func (f *field) write(v any) string {
	switch v := v.(type) {
	case int64:
		return formatValue(f, v)
	case time.Duration:
		return v.String()
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return formatFloat(v)
	case bool:
		return strconv.FormatBool(v)
	case string:
		return v
	}
	panic(fmt.Sprintf("scenarios: field %s has a value of type %T", f.path, v))
}

// sameSpec loads the written file and requires the spec it was written
// from, so a file that would run something else is never written.
func sameSpec(want *spec.Spec, name string, data []byte) error {
	specs, err := LoadBytes("written scenario", data)
	if err != nil {
		return fmt.Errorf("scenario %s: the written file does not load: %w", want.Name, err)
	}
	if len(specs) != 1 {
		return fmt.Errorf("scenario %s: the written file holds %d scenarios", want.Name, len(specs))
	}
	got := specs[0]
	got.Name, got.Source, got.File = want.Name, want.Source, want.File
	if !reflect.DeepEqual(&got, want) || specs[0].Name != name {
		return errors.New("scenario " + want.Name + ": the written file loads as a different configuration (a bug: please report it)")
	}
	return nil
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

// scalar is a plain value: the loader reads it as the field's kind.
func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// text is free text, quoted where YAML would read it as something else.
func text(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

func add(n *yaml.Node, key string, val *yaml.Node) {
	n.Content = append(n.Content, scalar(key), val)
}

// child returns n's mapping under key, adding it the first time.
func child(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	c := mapping()
	add(n, key, c)
	return c
}
