package exec

import (
	"slices"
	"time"

	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/results"
)

// Progress is told, a few times a second, how a repetition advances
// (run.Progress is one).
type Progress interface {
	Tick(spec *Spec, elapsed time.Duration, partitionsDone int, rss uint64)
}

// detailInterval is how often the loop asks for the tree's costlier
// figures (each process's VmHWM and PSS).
const detailInterval = 100 * time.Millisecond

// stderrKeep bounds what is kept of a command's output for error
// messages.
const stderrKeep = 16 << 10

// summarize summarises an exec stage's durations as the built-in
// pipeline's are: the same nearest-rank percentiles.
func summarize(ds []time.Duration) results.StageSummary {
	st := pipeline.SummarizeDurations(slices.Clone(ds))
	return results.SummaryOf(st.Count, st.Total, st.Mean, st.P50, st.P90, st.Max)
}
