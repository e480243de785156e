package results

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// SpecView is a scenario's recorded spec (spec.Spec as JSON) as the
// document's readers read it without linking the engine (see the package
// document): every setting, this build's or not, and the few fields they
// name.
type SpecView struct {
	// Settings are the spec's leaves by dotted path
	// ("pipeline.channel_capacity", "labels.pipeline.strategy") as JSON
	// values (float64, string, bool, nil, []any). A duration reads as its
	// nanoseconds whether it was written "20ms" or, by documents before
	// durations had units, as a number; the user's own text (name, source,
	// file, description, labels, vars) is kept as written.
	Settings map[string]any
	// MemoryLimit is memory_limit in bytes; 0 when none.
	MemoryLimit int64
}

// isText reports whether a top-level field of a spec holds the user's own
// text, never a duration, however it reads.
func isText(field string) bool {
	switch field {
	case "name", "source", "file", "description", "labels", "vars":
		return true
	}
	return false
}

// DecodeSpec decodes the scenario's recorded spec. A scenario without one
// (a document written by hand or by another tool) has an empty view; a
// spec that is not a JSON object is an error.
func (sc *Scenario) DecodeSpec() (SpecView, error) {
	v := SpecView{Settings: map[string]any{}}
	raw := strings.TrimSpace(string(sc.Spec))
	if raw == "" || raw == "null" {
		return v, nil
	}
	var tree map[string]any
	if err := json.Unmarshal(sc.Spec, &tree); err != nil {
		return SpecView{}, fmt.Errorf("scenario %s: spec: %w", sc.Name, err)
	}
	for k, sub := range tree {
		flatten(v.Settings, k, sub, isText(k))
	}
	if limit, ok := v.Settings["memory_limit"].(float64); ok {
		v.MemoryLimit = int64(limit)
	}
	return v, nil
}

// flatten adds the leaves of value under prefix to out.
func flatten(out map[string]any, prefix string, value any, text bool) {
	switch x := value.(type) {
	case map[string]any:
		for k, sub := range x {
			flatten(out, prefix+"."+k, sub, text)
		}
		return
	case string:
		if d, err := time.ParseDuration(x); err == nil && !text {
			value = float64(d)
		}
	}
	out[prefix] = value
}

// Section is the settings under the named top-level sections ("workload",
// "pipeline"), by dotted path.
func (v SpecView) Section(names ...string) map[string]any {
	out := map[string]any{}
	for k, val := range v.Settings {
		top, _, _ := strings.Cut(k, ".")
		if slices.Contains(names, top) {
			out[k] = val
		}
	}
	return out
}

// Key is one spelling of the settings, less the top-level fields named in
// omit (and everything under them): specs with the same settings have the
// same key, whatever order their fields or spelling their durations were
// written in.
func (v SpecView) Key(omit ...string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(v.Settings)) {
		top, _, _ := strings.Cut(k, ".")
		if slices.Contains(omit, top) {
			continue
		}
		val, _ := json.Marshal(v.Settings[k]) // decoded from JSON: encodes again
		fmt.Fprintf(&b, "%q=%s\n", k, val)
	}
	return b.String()
}
