package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// maxAxisValues bounds the values one range axis expands to: more is a
// step written in the wrong unit, not a sweep.
const maxAxisValues = 1000

// rangeKeys are the keys of a range axis, {from, to, step} or
// {from, to, times}.
var rangeKeys = []string{"from", "to", "step", "times"}

// rangeSpec is a range axis as written, its bounds parsed as the field's
// values.
type rangeSpec struct {
	node, from, to, step, times *yaml.Node
}

// rangeAxis expands a range axis, {from: 4, to: 18, step: 2} (arithmetic)
// or {from: 1, to: 16, times: 2} (geometric), into the field's values,
// each written as the loader would read it (96GiB, 2^24, 1.5s). The values
// point at the range in errors. It returns nil after reporting a problem.
func (p *parser) rangeAxis(f *field, n *yaml.Node, path string) []*leaf {
	r := rangeSpec{node: n}
	for _, kv := range p.pairs(n, path, 0) {
		switch kv.key.Value {
		case "from":
			r.from = deref(kv.val)
		case "to":
			r.to = deref(kv.val)
		case "step":
			r.step = deref(kv.val)
		case "times":
			r.times = deref(kv.val)
		default:
			p.unknown(kv.key, path+"."+kv.key.Value, kv.key.Value, rangeKeys)
		}
	}
	if !p.rangeComplete(f, r, path) {
		return nil
	}
	bounds := f
	if f.kind == kindString {
		bounds = &field{path: f.path, kind: kindInt} // a user variable ranges over integers
	}
	from, to := p.leaf(bounds, r.from, path+".from"), p.leaf(bounds, r.to, path+".to")
	if from.val == nil || to.val == nil {
		return nil // reported
	}
	var texts []string
	var ok bool
	if f.kind == kindFloat {
		texts, ok = p.floatRange(f, r, path, from.val.(float64), to.val.(float64))
	} else {
		texts, ok = p.intRange(bounds, r, path, asInt64(from.val), asInt64(to.val))
	}
	if !ok {
		return nil // reported
	}
	values := make([]*leaf, 0, len(texts))
	for _, text := range texts {
		v, err := f.parse(text)
		if err != nil {
			p.errorf(n, path, "the range's value %s: %v", text, err)
			return nil
		}
		values = append(values, &leaf{field: f, text: text, val: v, node: n, path: path})
	}
	return values
}

// rangeComplete checks that the range has its keys and that the field is
// one a range can sweep.
func (p *parser) rangeComplete(f *field, r rangeSpec, path string) bool {
	ok := true
	switch f.kind {
	case kindInt, kindSize, kindDuration, kindFloat, kindConstraints, kindString:
	default:
		p.errorf(r.node, path, "%s is %s: a range sweeps numbers, sizes, durations and user variables (as integers); write a list of values", f.path, kindText(f))
		return false
	}
	if r.from == nil {
		p.errorf(r.node, path+".from", "missing: a range needs from, to and step (or times)")
		ok = false
	}
	if r.to == nil {
		p.errorf(r.node, path+".to", "missing: a range needs from, to and step (or times)")
		ok = false
	}
	switch {
	case r.step != nil && r.times != nil:
		p.errorf(r.times, path+".times", "a range takes step (arithmetic) or times (geometric), not both")
		ok = false
	case r.step == nil && r.times == nil:
		p.errorf(r.node, path+".step", "missing: a range needs step (such as step: 2) or times (such as times: 2)")
		ok = false
	case r.step != nil && f.kind == kindConstraints:
		p.errorf(r.step, path+".step", "constraints are powers of two: sweep them with times: 2")
		ok = false
	}
	return ok
}

// asInt64 is an integer-like field value (int64, byte size, duration,
// constraints) as an int64.
func asInt64(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case time.Duration:
		return int64(v)
	}
	panic(fmt.Sprintf("scenarios: range over a value of type %T", v))
}

// intRange lists the values of a range over integers, sizes, durations or
// constraints, formatted as the field writes them.
func (p *parser) intRange(f *field, r rangeSpec, path string, from, to int64) ([]string, bool) {
	if !p.ordered(r, path, from <= to) {
		return nil, false
	}
	var vals []int64
	if r.step != nil {
		stepField := *f
		stepField.lo, stepField.hi = bound{}, bound{} // a step is no value of the field
		sl := p.leaf(&stepField, r.step, path+".step")
		if sl.val == nil {
			return nil, false
		}
		step := asInt64(sl.val)
		if step <= 0 {
			p.errorf(r.step, path+".step", "%s: a step must be greater than 0", r.step.Value)
			return nil, false
		}
		// to >= from, so the difference is exact as an unsigned number.
		n := (uint64(to)-uint64(from))/uint64(step) + 1
		if n > maxAxisValues {
			p.errorf(r.node, path, "%d values: more than %d in one axis; take a larger step", n, maxAxisValues)
			return nil, false
		}
		for i := range int64(n) {
			vals = append(vals, from+i*step)
		}
	} else {
		times, ok := p.times(r, path, true)
		if !ok {
			return nil, false
		}
		if from <= 0 {
			p.errorf(r.from, path+".from", "%s: a geometric range (times) starts above 0", r.from.Value)
			return nil, false
		}
		k := int64(times)
		for v := from; ; v *= k {
			vals = append(vals, v)
			if len(vals) > maxAxisValues {
				p.errorf(r.node, path, "more than %d values in one axis; take a larger factor", maxAxisValues)
				return nil, false
			}
			if v > to/k {
				break
			}
		}
	}
	texts := make([]string, len(vals))
	for i, v := range vals {
		texts[i] = formatValue(f, v)
	}
	return texts, true
}

// floatRange lists the values of a range over a number field. Values are
// from + i*step rounded to 12 significant figures, so 0.1 steps end on
// their bound rather than a rounding error short of it.
func (p *parser) floatRange(f *field, r rangeSpec, path string, from, to float64) ([]string, bool) {
	if !p.ordered(r, path, from <= to) {
		return nil, false
	}
	var vals []float64
	if r.step != nil {
		stepField := *f
		stepField.lo, stepField.hi = bound{}, bound{}
		sl := p.leaf(&stepField, r.step, path+".step")
		if sl.val == nil {
			return nil, false
		}
		step := sl.val.(float64)
		if step <= 0 {
			p.errorf(r.step, path+".step", "%s: a step must be greater than 0", r.step.Value)
			return nil, false
		}
		n := math.Floor((to-from)/step*(1+1e-12)) + 1
		if n > maxAxisValues {
			p.errorf(r.node, path, "%.0f values: more than %d in one axis; take a larger step", n, maxAxisValues)
			return nil, false
		}
		for i := range int(n) {
			// A step below the 12th figure rounds to the value before it.
			if v := roundFigures(from + float64(i)*step); len(vals) == 0 || v != vals[len(vals)-1] {
				vals = append(vals, v)
			}
		}
	} else {
		times, ok := p.times(r, path, false)
		if !ok {
			return nil, false
		}
		if from <= 0 {
			p.errorf(r.from, path+".from", "%s: a geometric range (times) starts above 0", r.from.Value)
			return nil, false
		}
		for v := from; v <= to*(1+1e-12); v = roundFigures(v * times) {
			vals = append(vals, v)
			if len(vals) > maxAxisValues {
				p.errorf(r.node, path, "more than %d values in one axis; take a larger factor", maxAxisValues)
				return nil, false
			}
		}
	}
	texts := make([]string, len(vals))
	for i, v := range vals {
		texts[i] = formatFloat(v)
	}
	return texts, true
}

// ordered reports a range whose from is above its to.
func (p *parser) ordered(r rangeSpec, path string, ok bool) bool {
	if !ok {
		p.errorf(r.to, path+".to", "%s is below from (%s): a range runs upwards", r.to.Value, r.from.Value)
	}
	return ok
}

// times reads a geometric range's factor: above 1, and a whole number for
// fields whose values are whole.
func (p *parser) times(r rangeSpec, path string, whole bool) (float64, bool) {
	x, err := parseFloat(r.times.Value)
	switch {
	case r.times.Kind != yaml.ScalarNode || err != nil:
		p.errorf(r.times, path+".times", "want a number such as 2; got %s", describe(r.times))
	case x <= 1:
		p.errorf(r.times, path+".times", "%s: the factor must be greater than 1", r.times.Value)
	case whole && (x != math.Trunc(x) || x > math.MaxInt32):
		p.errorf(r.times, path+".times", "%s: this field's values are whole, so the factor is a whole number (such as 2)", r.times.Value)
	default:
		return x, true
	}
	return 0, false
}

// roundFigures rounds x to 12 significant figures.
func roundFigures(x float64) float64 {
	y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return y
}

// formatValue writes an integer-like value of f as the loader reads it back
// exactly: 96GiB, 2^24, 1m30s, 12.
func formatValue(f *field, v int64) string {
	switch f.kind {
	case kindSize:
		return FormatSize(v)
	case kindDuration:
		return time.Duration(v).String()
	case kindConstraints:
		if v > 0 && v&(v-1) == 0 {
			return fmt.Sprintf("2^%d", log2(int(v)))
		}
	}
	return strconv.FormatInt(v, 10)
}

// FormatSize writes a byte count exactly, in the unit that writes it
// shortest (the first of sizeUnits, binary before decimal, on a tie):
// 96GiB, 1536MiB, 2GB, 1536. ParseSize reads it back to the same count.
func FormatSize(n int64) string {
	best := strconv.FormatInt(n, 10)
	for _, u := range sizeUnits {
		if u.bytes == 1 || n == 0 || n%u.bytes != 0 {
			continue
		}
		if text := strconv.FormatInt(n/u.bytes, 10) + u.name; len(text) < len(best) {
			best = text
		}
	}
	return best
}
