package present

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/history/trend"
)

// TestChangesWritesValuesInTheirUnit: a kept metric's medians are written
// by its unit, as every table writes them; a metric this provebench does
// not know (rows the history keeps from another version) keeps four
// significant figures rather than a count's one decimal.
func TestChangesWritesValuesInTheirUnit(t *testing.T) {
	at := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	rep := trend.Report{Series: 2, Judged: 2, Changes: []trend.Change{
		{Key: trend.Key{Backend: "cpu", Configuration: "synth", Metric: "seconds_per_proof"}, Commit: "0123456789abcdef", Time: at, Before: 1.5, After: 1.75, Percent: 16.7, Regression: true},
		{Key: trend.Key{Backend: "cpu", Configuration: "synth", Metric: "retired_share"}, Commit: "0123456789abcdef", Time: at, Before: 0.01234, After: 0.02468, Percent: 100},
	}}
	var b bytes.Buffer
	if err := Changes(&b, "table", rep, 0.05); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1.500s -> 1.750s", "0.01234 -> 0.02468"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
}
