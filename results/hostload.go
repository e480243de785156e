package results

import (
	"fmt"
	"math"
	"slices"

	"github.com/provebench/provebench/internal/stats"
)

// LoadSkewMargin is how far a configuration's neighbours' share of the
// host may sit from the rest of the run's before its figures are flagged
// as measured under a different load: a tenth of the machine, the same
// margin as QuietOthers. Timed figures of a CPU pipeline move with the
// CPU time neighbours take (a figure measured with half the machine taken
// is not comparable with one measured on an idle host), and a tenth is
// the share the gate already calls quiet.
const LoadSkewMargin = 0.10

// LoadSkew is a configuration whose measured repetitions ran while
// neighbours took a different share of the host than during the rest of
// the run's: its timed figures (throughput, s/proof) are the host's as
// much as its own, and a reader must not rank it on them against the rest.
type LoadSkew struct {
	// Scenario is the configuration's name.
	Scenario string
	// Others is the median share of the host's CPU time neighbours used
	// during its measured repetitions (HostLoad.OthersCPUFraction), 0..1.
	Others float64
	// Min and Max are that share's range over its repetitions.
	Min, Max float64
	// Rest is the median of the other configurations' medians.
	Rest float64
}

// String is the skew with its figures, for tables and notes:
// "neighbours took 52% (45–69%) of the host, the others' repetitions 8%".
func (s LoadSkew) String() string {
	return fmt.Sprintf("neighbours took %.0f%% (%.0f–%.0f%%) of the host, the other configurations' %.0f%% (medians)",
		100*s.Others, 100*s.Min, 100*s.Max, 100*s.Rest)
}

// LoadSkews returns, in the run's order, the configurations whose
// measured repetitions ran under a host load that differed from the
// rest's: the median of their neighbours' shares lies more than
// LoadSkewMargin from the median of the other configurations' medians,
// and more than half of it from the median of all configurations'
// medians (so that one configuration measured under load does not get its
// quiet neighbours flagged with it; of two that differ, both are). A run
// of one configuration, or whose repetitions recorded no neighbours'
// share, has none.
func LoadSkews(run *Run) []LoadSkew {
	var skews []LoadSkew
	var medians []float64
	for i := range run.Scenarios {
		own := othersShares(&run.Scenarios[i])
		if len(own) == 0 {
			continue
		}
		s := LoadSkew{Scenario: run.Scenarios[i].Name, Others: stats.Median(own), Min: own[0], Max: own[0]}
		for _, v := range own {
			s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
		}
		skews = append(skews, s)
		medians = append(medians, s.Others)
	}
	if len(skews) < 2 {
		return nil
	}
	all := stats.Median(medians)
	var out []LoadSkew
	for i, s := range skews {
		s.Rest = stats.Median(append(slices.Clone(medians[:i]), medians[i+1:]...))
		if math.Abs(s.Others-s.Rest) > LoadSkewMargin && math.Abs(s.Others-all) > LoadSkewMargin/2 {
			out = append(out, s)
		}
	}
	return out
}

// othersShares is the neighbours' share of the host over each measured
// repetition of a configuration that recorded it.
func othersShares(sc *Scenario) []float64 {
	var v []float64
	for i := range sc.Repetitions {
		r := &sc.Repetitions[i]
		if !r.Measured() || r.HostLoad == nil || r.HostLoad.OthersCPUFraction == nil {
			continue
		}
		v = append(v, *r.HostLoad.OthersCPUFraction)
	}
	return v
}
