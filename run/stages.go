package run

import (
	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/results"
)

// StageSummary is a stage's figures as a results document records them.
func StageSummary(st pipeline.StageStats) results.StageSummary {
	return results.SummaryOf(st.Count, st.Total, st.Mean, st.P50, st.P90, st.Max)
}
