package predict

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/results"
)

// FamilyBy is the rule that groups configurations into families for
// cross-validation: a family is left out of the calibration together, so
// that what the model predicts it never saw, even in a sibling.
//
//   - "matrix" (the default): the configuration's family variable
//     (vars: {family: NAME}) where it sets one, else the matrix it is a
//     point of (the first segment of its name, within its scenario file),
//     else its own name (an explicit scenario is a family of its own);
//   - "config": the configuration itself, so that only its repetitions,
//     in however many documents, are left out;
//   - "label:NAME": the configuration's resolved field at the path NAME,
//     as results record it (label:workload.constraints leaves one size
//     out at a time, whether a matrix swept it or a scenario set it),
//     else its matrix label or variable NAME; a configuration with none is
//     refused.
type FamilyBy struct {
	Rule  string // "matrix", "config" or "label"
	Label string // with "label"
}

// ParseFamilyBy reads a --family-by value.
func ParseFamilyBy(s string) (FamilyBy, error) {
	switch {
	case s == "" || s == "matrix":
		return FamilyBy{Rule: "matrix"}, nil
	case s == "config":
		return FamilyBy{Rule: "config"}, nil
	case strings.HasPrefix(s, "label:") && len(s) > len("label:"):
		return FamilyBy{Rule: "label", Label: strings.TrimPrefix(s, "label:")}, nil
	}
	return FamilyBy{}, fmt.Errorf("%q is not matrix, config or label:NAME", s)
}

func (f FamilyBy) String() string {
	if f.Rule == "label" {
		return "label:" + f.Label
	}
	return f.Rule
}

// Of is a configuration's family.
func (f FamilyBy) Of(p *Point) (string, error) {
	switch f.Rule {
	case "config":
		return scoped(p, p.Scenario), nil
	case "label":
		if v, ok := labelValue(p, f.Label); ok {
			return f.Label + "=" + v, nil
		}
		return "", fmt.Errorf("%s: configuration %s has no label, variable or field %s", p.File, p.Scenario, f.Label)
	}
	if v, ok := p.Spec.Vars["family"]; ok && v != "" {
		return v, nil
	}
	matrix, _, _ := strings.Cut(p.Scenario, "/")
	return scoped(p, matrix), nil
}

// scoped qualifies a name by its scenario file, as a run whose files
// define it twice does.
func scoped(p *Point, name string) string {
	if p.Spec.File == "" || strings.HasPrefix(name, p.Spec.File+":") {
		return name
	}
	return p.Spec.File + ":" + name
}

// labelValue finds a label's value: the configuration's resolved field at
// that JSON path, else a matrix label (as written) or a variable. The
// resolved field comes first so that a size swept by one matrix and set
// by another scenario is one value.
func labelValue(p *Point, name string) (string, bool) {
	if v, ok := fieldValue(p, name); ok {
		return v, true
	}
	if v, ok := p.Spec.Labels[name]; ok {
		return v, true
	}
	v, ok := p.Spec.Vars[name]
	return v, ok
}

// fieldValue is the configuration's resolved field at a JSON path, a
// power of two from 2^10 written as such (2^22, not 4194304).
func fieldValue(p *Point, path string) (string, bool) {
	raw, err := json.Marshal(p.Spec)
	if err != nil {
		return "", false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // 1048576, not 1.048576e+06
	if dec.Decode(&v) != nil {
		return "", false
	}
	for _, key := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok = obj[key]; !ok {
			return "", false
		}
	}
	switch x := v.(type) {
	case map[string]any, []any, nil:
		return "", false
	case json.Number:
		if n, err := x.Int64(); err == nil && n >= 1<<10 && n&(n-1) == 0 {
			return fmt.Sprintf("2^%d", bits.Len64(uint64(n))-1), true
		}
	}
	return fmt.Sprint(v), true
}

// Prediction is one held-out configuration predicted by a model
// calibrated on every other family.
type Prediction struct {
	Family string
	Point  Point
	// CalibratedOn is how many configurations the model was fitted to.
	CalibratedOn    int
	SecondsPerProof float64
	PeakRSS         float64
	OOM             bool
	// Check is the prediction stage by stage (nil when not predicted).
	Check *Check
	// Err says why the configuration was not predicted ("" when it was):
	// the rest did not calibrate, or measured no run of its synthesis mode.
	Err string
}

// SecondsPerProofErr and PeakRSSErr are the signed relative errors,
// (predicted - measured) / measured; NaN when not predicted.
func (p *Prediction) SecondsPerProofErr() float64 {
	return relative(p, p.SecondsPerProof, p.Point.SecondsPerProof)
}

// PeakRSSErr is the peak RSS's signed relative error.
func (p *Prediction) PeakRSSErr() float64 { return relative(p, p.PeakRSS, p.Point.PeakRSS) }

func relative(p *Prediction, pred, meas float64) float64 {
	if p.Err != "" || p.OOM || meas <= 0 || math.IsNaN(meas) {
		return math.NaN()
	}
	return (pred - meas) / meas
}

// CrossValidation is every configuration predicted with its family left
// out of the calibration.
type CrossValidation struct {
	FamilyBy    FamilyBy
	Families    []string
	Predictions []Prediction
	// Notes say what the folds assumed (a rest of one size), once each.
	Notes []string
	// Pinned are the documents in every fold's calibration, never
	// predicted.
	Pinned []string
}

// CrossValidate leaves each family of ms.Points out in turn, fits a model
// to the rest, and predicts the family's configurations. The
// configurations of the files in pinned (a calibration set of plain
// shapes) are in every fold's rest and are never left out or predicted.
// It needs two families at least, one of them left out. A fold whose rest
// does not calibrate leaves its family not predicted, with the reason;
// ctx stops it between folds.
func CrossValidate(ctx context.Context, ms *Measurements, by FamilyBy, hostMemory int64, pinned []string) (*CrossValidation, error) {
	const always = "" // the pinned configurations' family: never a fold
	family := make([]string, len(ms.Points))
	members := map[string][]int{}
	nPinned := 0
	for i := range ms.Points {
		// A configuration that a pinned document measured is a calibration
		// shape, whatever other documents also ran it.
		if slices.ContainsFunc(ms.Points[i].documents(), func(f string) bool { return slices.Contains(pinned, f) }) {
			family[i] = always
			nPinned++
			continue
		}
		f, err := by.Of(&ms.Points[i])
		if err != nil {
			return nil, err
		}
		family[i] = f
		members[f] = append(members[f], i)
	}
	cv := &CrossValidation{FamilyBy: by, Families: slices.Sorted(maps.Keys(members)), Pinned: slices.Clone(pinned)}
	if len(cv.Families) == 0 {
		return nil, errors.New("cross-validation needs a family to leave out: every configuration is in a pinned calibration file")
	}
	if len(cv.Families) < 2 && nPinned == 0 {
		return nil, fmt.Errorf("cross-validation needs two families at least; --family-by %s puts every configuration in %q", by, cv.Families[0])
	}
	notes := map[string]bool{}
	for _, f := range cv.Families {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var rest, out []Point
		for i, p := range ms.Points {
			if family[i] == f {
				out = append(out, p)
			} else {
				rest = append(rest, p)
			}
		}
		m, err := ms.Fit(rest)
		cv.Predictions = append(cv.Predictions, fold(f, m, err, len(rest), out, hostMemory)...)
		if err == nil {
			if n, ok := m.OneSize(); ok && !notes[OneSizeNote(n)] {
				notes[OneSizeNote(n)] = true
				cv.Notes = append(cv.Notes, fmt.Sprintf("without family %s, the rest was %s", f, OneSizeNote(n)))
			}
		}
	}
	return cv, nil
}

// fold predicts family's configurations out with m, the model fitted to
// the rest (or the error that fitting gave).
func fold(family string, m *Model, err error, rest int, out []Point, hostMemory int64) []Prediction {
	preds := make([]Prediction, len(out))
	for i, p := range out {
		preds[i] = Prediction{Family: family, Point: p, CalibratedOn: rest}
		if err != nil {
			preds[i].Err = "the rest does not calibrate: " + err.Error()
			continue
		}
		c, err := m.predict(p, hostMemory)
		if err != nil {
			preds[i].Err = err.Error()
			continue
		}
		preds[i].SecondsPerProof, preds[i].PeakRSS, preds[i].OOM = c.SecondsPerProof, c.PeakRSS, c.OOM
		preds[i].Check = &c
		if c.OOM {
			preds[i].Err = "predicted out of memory"
		}
	}
	return preds
}

// Distribution summarizes absolute relative errors.
type Distribution struct {
	N                 int // configurations predicted
	Missing           int // configurations not predicted
	Median, P90, Max  float64
	MedianSigned, Min float64 // the signed errors' median and least
}

// ErrorDistribution is the distribution of relative errors, NaN marking a
// configuration not predicted (cross-validation's, a frozen prediction's
// in scripts/frozen). P90 is the nearest rank: the least |error| that 90%
// of the configurations stay within.
func ErrorDistribution(errs []float64) Distribution {
	var d Distribution
	var abs, signed []float64
	for _, e := range errs {
		if math.IsNaN(e) {
			d.Missing++
			continue
		}
		abs = append(abs, math.Abs(e))
		signed = append(signed, e)
	}
	d.N = len(abs)
	if d.N == 0 {
		d.Median, d.P90, d.Max, d.MedianSigned, d.Min = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return d
	}
	slices.Sort(abs)
	d.Median, d.Max = stats.Median(abs), abs[len(abs)-1]
	d.P90 = stats.Percentile(abs, 90)
	d.MedianSigned, d.Min = stats.Median(signed), slices.Min(signed)
	return d
}

// Metric names, as the tables and targets say them. Peak RSS keeps the
// name the committed cross-validations were written with (their tests
// recompute them byte for byte), not the metric table's peak_rss_bytes:
// docs/architecture_test.go's TestOneMetricTable lists it as the one known
// second spelling.
const (
	MetricSecondsPerProof = results.SecondsPerProof
	MetricPeakRSS         = "peak_rss"
)

// Metrics are the metrics cross-validation judges, in table order.
var Metrics = []string{MetricSecondsPerProof, MetricPeakRSS}

// errorOf is a prediction's error in a metric.
func errorOf(p *Prediction, metric string) float64 {
	if metric == MetricPeakRSS {
		return p.PeakRSSErr()
	}
	return p.SecondsPerProofErr()
}

// Summary is a distribution of one metric's errors over a group of
// configurations: all of them (Group "all") or one strategy's.
type Summary struct {
	Metric, Group string
	Distribution
}

// Summaries are each metric's error distribution over every configuration
// and per strategy, strategies in name order.
func (cv *CrossValidation) Summaries() []Summary {
	strategies := map[string]bool{}
	for _, p := range cv.Predictions {
		strategies[string(p.Point.Spec.Pipeline.Strategy)] = true
	}
	var out []Summary
	for _, metric := range Metrics {
		for _, group := range append([]string{"all"}, slices.Sorted(maps.Keys(strategies))...) {
			var errs []float64
			for i := range cv.Predictions {
				p := &cv.Predictions[i]
				if group == "all" || string(p.Point.Spec.Pipeline.Strategy) == group {
					errs = append(errs, errorOf(p, metric))
				}
			}
			out = append(out, Summary{Metric: metric, Group: group, Distribution: ErrorDistribution(errs)})
		}
	}
	return out
}

// Targets are the most error a model may show: P90 and Max of |error|,
// as fractions (0.10 is 10%); 0 sets none.
type Targets struct{ P90, Max float64 }

// Misses says which targets the overall distributions miss, one sentence
// each; none when all are met. A configuration not predicted misses every
// target: what was not predicted was not shown to be within it.
func (cv *CrossValidation) Misses(t Targets) []string {
	if t.P90 <= 0 && t.Max <= 0 {
		return nil
	}
	var misses []string
	for _, s := range cv.Summaries() {
		if s.Group != "all" {
			continue
		}
		if s.Missing > 0 {
			misses = append(misses, fmt.Sprintf("%s: %d of %d configurations not predicted", s.Metric, s.Missing, s.N+s.Missing))
			continue
		}
		if s.N == 0 || math.IsNaN(s.P90) || math.IsNaN(s.Max) {
			misses = append(misses, fmt.Sprintf("%s: no error measured: nothing was shown to be within the targets", s.Metric))
			continue
		}
		if t.P90 > 0 && s.P90 > t.P90 {
			misses = append(misses, fmt.Sprintf("%s: p90 |error| %.1f%% above the target %.1f%%", s.Metric, 100*s.P90, 100*t.P90))
		}
		if t.Max > 0 && s.Max > t.Max {
			misses = append(misses, fmt.Sprintf("%s: max |error| %.1f%% above the target %.1f%%", s.Metric, 100*s.Max, 100*t.Max))
		}
	}
	return misses
}
