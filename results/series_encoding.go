package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Schema 2 stores a repetition's series delta-encoded: each column as the
// difference of every value from the one before (the first from zero),
// under the column's name with _delta (t_delta_us for the time axis, in
// whole microseconds). Sampled memory and counters change rarely and by
// round amounts, and samples come at a near-constant interval, so the
// differences are short numbers that repeat: a gzip-compressed document
// takes about half the bytes of the same figures written as values. A
// column the delta form cannot hold exactly (a time beyond 2^50 µs, a
// size beyond 2^63, a counter jump that overflows) is written as values,
// as in schema 1; readers take either form of any column, so schema-1
// documents read unchanged. The GPU utilisation, a fraction, stays as
// values.

// ReadsSchema reports whether this provebench reads documents of schema
// version v: 1 (columns as values) and 2 (columns delta-encoded).
func ReadsSchema(v int) bool { return v == 1 || v == SchemaVersion }

// maxDeltaMicros bounds the times written as microsecond deltas: within
// it, seconds → µs → seconds → µs gives the same µs (float64 keeps the
// product within a quarter of a µs), so a document reads back as written.
const maxDeltaMicros = 1 << 50

// seriesJSON is Series as stored: every column in one of its two forms.
type seriesJSON struct {
	IntervalSeconds float64 `json:"interval_seconds"`

	T        []float64 `json:"t,omitempty"`
	TDeltaUS []int64   `json:"t_delta_us,omitempty"`

	RSSBytes      []uint64 `json:"rss_bytes,omitempty"`
	RSSBytesDelta []int64  `json:"rss_bytes_delta,omitempty"`

	GPUMemoryBytes            []*uint64  `json:"gpu_memory_bytes,omitempty"`
	GPUMemoryBytesDelta       []*int64   `json:"gpu_memory_bytes_delta,omitempty"`
	GPUDeviceMemoryBytes      []*uint64  `json:"gpu_device_memory_bytes,omitempty"`
	GPUDeviceMemoryBytesDelta []*int64   `json:"gpu_device_memory_bytes_delta,omitempty"`
	GPUUtilization            []*float64 `json:"gpu_utilization,omitempty"`

	Counters      map[string][]int64 `json:"counters,omitempty"`
	CountersDelta map[string][]int64 `json:"counters_delta,omitempty"`
}

// MarshalJSON writes the series in schema 2's form.
func (s Series) MarshalJSON() ([]byte, error) {
	out := seriesJSON{IntervalSeconds: s.IntervalSeconds, GPUUtilization: s.GPUUtilization}
	if d, ok := deltaMicros(s.T); ok {
		out.TDeltaUS = d
	} else {
		out.T = s.T
	}
	if d, ok := deltaUnsigned(s.RSSBytes); ok {
		out.RSSBytesDelta = d
	} else {
		out.RSSBytes = s.RSSBytes
	}
	if d, ok := deltaOptional(s.GPUMemoryBytes); ok {
		out.GPUMemoryBytesDelta = d
	} else {
		out.GPUMemoryBytes = s.GPUMemoryBytes
	}
	if d, ok := deltaOptional(s.GPUDeviceMemoryBytes); ok {
		out.GPUDeviceMemoryBytesDelta = d
	} else {
		out.GPUDeviceMemoryBytes = s.GPUDeviceMemoryBytes
	}
	for name, v := range s.Counters {
		if d, ok := deltaSigned(v); ok {
			if out.CountersDelta == nil {
				out.CountersDelta = map[string][]int64{}
			}
			out.CountersDelta[name] = d
		} else {
			if out.Counters == nil {
				out.Counters = map[string][]int64{}
			}
			out.Counters[name] = v
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a series in either schema's form, refusing unknown
// fields and a column given in both forms.
func (s *Series) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var in seriesJSON
	if err := dec.Decode(&in); err != nil {
		return err
	}
	var errs []error
	both := func(name string, values, deltas bool) {
		if values && deltas {
			errs = append(errs, fmt.Errorf("series: both %s and %s_delta", name, name))
		}
	}
	both("t", in.T != nil, in.TDeltaUS != nil)
	both("rss_bytes", in.RSSBytes != nil, in.RSSBytesDelta != nil)
	both("gpu_memory_bytes", in.GPUMemoryBytes != nil, in.GPUMemoryBytesDelta != nil)
	both("gpu_device_memory_bytes", in.GPUDeviceMemoryBytes != nil, in.GPUDeviceMemoryBytesDelta != nil)
	out := Series{IntervalSeconds: in.IntervalSeconds, T: in.T, RSSBytes: in.RSSBytes,
		GPUMemoryBytes: in.GPUMemoryBytes, GPUDeviceMemoryBytes: in.GPUDeviceMemoryBytes,
		GPUUtilization: in.GPUUtilization, Counters: in.Counters}
	var err error
	if in.TDeltaUS != nil {
		if out.T, err = undeltaMicros(in.TDeltaUS); err != nil {
			errs = append(errs, fmt.Errorf("series: t_delta_us: %w", err))
		}
	}
	if in.RSSBytesDelta != nil {
		if out.RSSBytes, err = undeltaUnsigned(in.RSSBytesDelta); err != nil {
			errs = append(errs, fmt.Errorf("series: rss_bytes_delta: %w", err))
		}
	}
	if in.GPUMemoryBytesDelta != nil {
		if out.GPUMemoryBytes, err = undeltaOptional(in.GPUMemoryBytesDelta); err != nil {
			errs = append(errs, fmt.Errorf("series: gpu_memory_bytes_delta: %w", err))
		}
	}
	if in.GPUDeviceMemoryBytesDelta != nil {
		if out.GPUDeviceMemoryBytes, err = undeltaOptional(in.GPUDeviceMemoryBytesDelta); err != nil {
			errs = append(errs, fmt.Errorf("series: gpu_device_memory_bytes_delta: %w", err))
		}
	}
	for name, d := range in.CountersDelta {
		if _, dup := in.Counters[name]; dup {
			errs = append(errs, fmt.Errorf("series: counter %s both in counters and counters_delta", name))
			continue
		}
		v, err := undeltaSigned(d)
		if err != nil {
			errs = append(errs, fmt.Errorf("series: counters_delta.%s: %w", name, err))
			continue
		}
		if out.Counters == nil {
			out.Counters = map[string][]int64{}
		}
		out.Counters[name] = v
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	*s = out
	return nil
}

// deltaMicros encodes seconds as differences of whole microseconds; ok is
// false when a time is beyond maxDeltaMicros (or not finite).
func deltaMicros(t []float64) ([]int64, bool) {
	if t == nil {
		return nil, true
	}
	out := make([]int64, len(t))
	var prev int64
	for i, v := range t {
		us := math.Round(v * 1e6)
		if !(math.Abs(us) <= maxDeltaMicros) {
			return nil, false
		}
		out[i] = int64(us) - prev
		prev = int64(us)
	}
	return out, true
}

func undeltaMicros(d []int64) ([]float64, error) {
	out := make([]float64, len(d))
	var acc int64
	for i, v := range d {
		acc += v // |v| is bounded below, so the sum cannot wrap first
		if v > 2*maxDeltaMicros || v < -2*maxDeltaMicros || acc > maxDeltaMicros || acc < -maxDeltaMicros {
			return nil, fmt.Errorf("value %d: beyond ±2^50 µs", i)
		}
		out[i] = float64(acc) / 1e6
	}
	return out, nil
}

// deltaUnsigned encodes sizes; ok is false when one passes math.MaxInt64.
func deltaUnsigned(v []uint64) ([]int64, bool) {
	if v == nil {
		return nil, true
	}
	out := make([]int64, len(v))
	var prev int64
	for i, x := range v {
		if x > math.MaxInt64 {
			return nil, false
		}
		out[i] = int64(x) - prev // both in [0, MaxInt64]: no overflow
		prev = int64(x)
	}
	return out, true
}

func undeltaUnsigned(d []int64) ([]uint64, error) {
	out := make([]uint64, len(d))
	var acc int64
	for i, v := range d {
		next, ok := add(acc, v)
		if !ok || next < 0 {
			return nil, fmt.Errorf("value %d: out of range", i)
		}
		acc = next
		out[i] = uint64(acc)
	}
	return out, nil
}

// deltaOptional encodes a column with gaps: a null stays null, and each
// value is the difference from the last value before it.
func deltaOptional(v []*uint64) ([]*int64, bool) {
	if v == nil {
		return nil, true
	}
	out := make([]*int64, len(v))
	var prev int64
	for i, x := range v {
		if x == nil {
			continue
		}
		if *x > math.MaxInt64 {
			return nil, false
		}
		d := int64(*x) - prev
		out[i] = &d
		prev = int64(*x)
	}
	return out, true
}

func undeltaOptional(d []*int64) ([]*uint64, error) {
	out := make([]*uint64, len(d))
	var acc int64
	for i, v := range d {
		if v == nil {
			continue
		}
		next, ok := add(acc, *v)
		if !ok || next < 0 {
			return nil, fmt.Errorf("value %d: out of range", i)
		}
		acc = next
		u := uint64(acc)
		out[i] = &u
	}
	return out, nil
}

// deltaSigned encodes a counter; ok is false when a difference overflows.
func deltaSigned(v []int64) ([]int64, bool) {
	out := make([]int64, len(v))
	var prev int64
	for i, x := range v {
		d, ok := add(x, -prev)
		if !ok || prev == math.MinInt64 {
			return nil, false
		}
		out[i] = d
		prev = x
	}
	return out, true
}

func undeltaSigned(d []int64) ([]int64, error) {
	out := make([]int64, len(d))
	var acc int64
	for i, v := range d {
		next, ok := add(acc, v)
		if !ok {
			return nil, fmt.Errorf("value %d: out of range", i)
		}
		acc = next
		out[i] = acc
	}
	return out, nil
}

// add is a + b, ok false when it overflows.
func add(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}
