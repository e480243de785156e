package results

// Measured is sc's measured repetitions (Repetition.Measured: finished,
// not warm-ups), in the document's order: the repetitions every statistic
// of a configuration is taken over.
func (sc *Scenario) Measured() []*Repetition {
	var out []*Repetition
	for i := range sc.Repetitions {
		if sc.Repetitions[i].Measured() {
			out = append(out, &sc.Repetitions[i])
		}
	}
	return out
}

// Values is metric m's figures over sc's measured repetitions, in their
// order; a repetition that lacks the figure (m.Value's ok false) is left
// out.
func (sc *Scenario) Values(m Metric) []float64 {
	var v []float64
	for _, r := range sc.Measured() {
		if x, ok := m.Value(r); ok {
			v = append(v, x)
		}
	}
	return v
}
