package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/provebench/provebench/internal/stats"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/results"
)

// judged are the metrics a frozen prediction is judged on, in table order.
var judged = []string{results.PartitionsPerSecond, results.PeakRSSBytes}

// row is one configuration of the prediction and its runs.
type row struct {
	name string
	// predicted is the simulated repetition's outcome and figures.
	predictedOOM bool
	predicted    []float64
	// ok and oom count the measured repetitions that finished and those
	// stopped at the memory limit; measured are the medians of the
	// finished ones' figures (NaN where none has the figure).
	ok, oom  int
	measured []float64
}

// ran reports whether the configuration has a measured outcome to judge.
func (r row) ran() bool { return r.ok > 0 || r.oom > 0 }

// outcomeRight reports whether the prediction's outcome is the runs':
// finished where predicted to, stopped at the memory limit where
// predicted to pass it.
func (r row) outcomeRight() bool {
	if r.predictedOOM {
		return r.oom > 0 && r.ok == 0
	}
	return r.oom == 0 && r.ok > 0
}

// errorOf is the signed relative error of metric i, NaN where it cannot
// be judged (a predicted or measured stop, a figure absent).
func (r row) errorOf(i int) float64 {
	if r.predictedOOM || r.ok == 0 || !r.outcomeRight() {
		return math.NaN()
	}
	p, m := r.predicted[i], r.measured[i]
	if math.IsNaN(p) || math.IsNaN(m) || m == 0 {
		return math.NaN()
	}
	return (p - m) / m
}

// judgement is every configuration of the prediction, in its order.
type judgement struct {
	rows []row
}

func judge(pred, runs *results.Run) judgement {
	measured := map[string]*results.Scenario{}
	for i := range runs.Scenarios {
		measured[runs.Scenarios[i].Name] = &runs.Scenarios[i]
	}
	var j judgement
	for i := range pred.Scenarios {
		sc := &pred.Scenarios[i]
		r := row{name: sc.Name}
		r.predictedOOM, r.predicted = predictedOf(sc)
		r.measured = unknown()
		if m := measured[sc.Name]; m != nil {
			r.ok, r.oom, r.measured = measuredOf(m)
		}
		j.rows = append(j.rows, r)
	}
	return j
}

// unknown is a figure per judged metric, each NaN until one is found.
func unknown() []float64 {
	figures := make([]float64, len(judged))
	for k := range figures {
		figures[k] = math.NaN()
	}
	return figures
}

// predictedOf is the simulated repetition's outcome and figures.
func predictedOf(sc *results.Scenario) (oom bool, figures []float64) {
	figures = unknown()
	for i := range sc.Repetitions {
		rep := &sc.Repetitions[i]
		if rep.Warmup {
			continue
		}
		for k, name := range judged {
			if v, ok := results.MetricOf(name).Value(rep); ok {
				figures[k] = v
			}
		}
		return rep.Status == results.StatusMemoryLimit, figures
	}
	return false, figures
}

// measuredOf counts the measured repetitions by outcome and takes the
// medians of the finished ones' figures.
func measuredOf(sc *results.Scenario) (ok, oom int, medians []float64) {
	values := make([][]float64, len(judged))
	for i := range sc.Repetitions {
		rep := &sc.Repetitions[i]
		switch {
		case rep.Warmup:
		case rep.Status == results.StatusMemoryLimit:
			oom++
		case rep.Measured():
			ok++
			for k, name := range judged {
				if v, present := results.MetricOf(name).Value(rep); present {
					values[k] = append(values[k], v)
				}
			}
		}
	}
	medians = make([]float64, len(judged))
	for k, v := range values {
		medians[k] = stats.Median(v) // NaN for none
	}
	return ok, oom, medians
}

// spread is the distribution of one metric's errors over the
// configurations judged (those not judged are NaN, counted as missing).
func (j judgement) spread(metric int) predict.Distribution {
	errs := make([]float64, len(j.rows))
	for i, r := range j.rows {
		errs[i] = r.errorOf(metric)
	}
	return predict.ErrorDistribution(errs)
}

// unjudged names each configuration that leaves a figure of the
// prediction unchecked: one with no run, or one predicted and measured to
// finish whose predicted or measured figure is not finite. A p90 over
// the others would pass a prediction that was never fully checked.
func (j judgement) unjudged() []string {
	var names []string
	for _, r := range j.rows {
		if !r.ran() {
			names = append(names, r.name+": not run")
			continue
		}
		if r.predictedOOM || !r.outcomeRight() {
			continue
		}
		for k, name := range judged {
			heading := results.MetricOf(name).Heading
			if !finite(r.predicted[k]) {
				names = append(names, fmt.Sprintf("%s: %s predicted is %v", r.name, heading, r.predicted[k]))
			}
			if !finite(r.measured[k]) {
				names = append(names, fmt.Sprintf("%s: %s measured is %v", r.name, heading, r.measured[k]))
			}
		}
	}
	return names
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// status is the exit status: missed when an outcome was predicted wrong,
// a configuration was not judged (unjudged) or a p90 passes the limit;
// inconclusive when nothing ran at all.
func (j judgement) status(limit float64) int {
	judgedAny := false
	for _, r := range j.rows {
		if r.ran() && !r.outcomeRight() {
			return exitMissed
		}
		judgedAny = judgedAny || r.ran()
	}
	if !judgedAny {
		return exitInconclusive
	}
	if len(j.unjudged()) > 0 {
		return exitMissed
	}
	for k := range judged {
		if s := j.spread(k); s.N > 0 && s.P90 > limit {
			return exitMissed
		}
	}
	return exitOK
}

// format writes a metric's figure in its unit.
func format(metric string, v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	if results.MetricOf(metric).Unit == results.UnitByte {
		return units.FormatBytes(int64(v))
	}
	return fmt.Sprintf("%.3f", v)
}

func percent(e float64) string {
	if math.IsNaN(e) {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", 100*e)
}

// write prints the table and each metric's distribution as Markdown.
func (j judgement) write(w io.Writer, predPath, runsPath string, limit float64) {
	fmt.Fprintf(w, "frozen prediction %s judged by %s\n\n", predPath, runsPath)
	fmt.Fprint(w, "| configuration | outcome predicted | measured |")
	for _, name := range judged {
		h := results.MetricOf(name).Heading
		fmt.Fprintf(w, " %s predicted | measured | error |", h)
	}
	fmt.Fprint(w, "\n|---|---|---|")
	for range judged {
		fmt.Fprint(w, "---|---|---|")
	}
	fmt.Fprintln(w)
	for _, r := range j.rows {
		fmt.Fprintf(w, "| %s | %s | %s |", r.name, r.predictedOutcome(), r.measuredOutcome())
		for k, name := range judged {
			fmt.Fprintf(w, " %s | %s | %s |", format(name, r.predicted[k]), format(name, r.measured[k]), percent(r.errorOf(k)))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\n(measured: the median of the finished repetitions; error: (predicted − measured) / measured)")
	fmt.Fprintln(w)
	for k, name := range judged {
		j.writeSpread(w, name, j.spread(k), limit)
	}
	if names := j.unjudged(); len(names) > 0 {
		fmt.Fprintf(w, "\n**not judged**, so the prediction fails whatever the errors: %s\n", strings.Join(names, "; "))
	}
}

func (j judgement) writeSpread(w io.Writer, metric string, s predict.Distribution, limit float64) {
	label := results.MetricOf(metric).Heading
	if s.N == 0 {
		fmt.Fprintf(w, "%s: no configuration judged\n", label)
		return
	}
	verdict := "within"
	if s.P90 > limit {
		verdict = "**past**"
	}
	fmt.Fprintf(w, "%s |error| over %s: median %.1f%%, p90 %.1f%% (%s the target %.0f%%), max %.1f%%; signed median %+.1f%%\n",
		label, units.Plural(s.N, "configuration"), 100*s.Median, 100*s.P90, verdict, 100*limit, 100*s.Max, 100*s.MedianSigned)
}

func (r row) predictedOutcome() string {
	if r.predictedOOM {
		return "memory-limit"
	}
	return "ok"
}

func (r row) measuredOutcome() string {
	if !r.ran() {
		return "**not run**"
	}
	s := fmt.Sprintf("ok %d", r.ok)
	if r.oom > 0 {
		s += fmt.Sprintf(", memory-limit %d", r.oom)
	}
	if !r.outcomeRight() {
		s += " (**outcome wrong**)"
	}
	return s
}
