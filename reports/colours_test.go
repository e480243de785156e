package reports

import (
	"testing"

	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
)

// A registered strategy keeps its colour whatever else the run holds, and
// no two registered strategies share one; the run's other strategies
// (compositions) follow them.
func TestStrategyColours(t *testing.T) {
	colours := config.Registered().Colours()
	sums := func(strategies ...string) []*scenarioSummary {
		var out []*scenarioSummary
		for _, s := range strategies {
			out = append(out, &scenarioSummary{sc: &results.Scenario{Strategy: s}})
		}
		return out
	}
	alone := strategyOrder(sums("hold"), colours)
	mixed := strategyOrder(sums("budget+pacer", "pacer", "hold", "release"), colours)
	used := map[int]string{}
	for name, c := range colours {
		if a, m := strategyIndex(name, alone), strategyIndex(name, mixed); a != m || a != c {
			t.Errorf("%s: colour %d alone, %d in a mixed run, want its registered %d", name, a, m, c)
		}
		if other, ok := used[strategyIndex(name, mixed)%len(palette)]; ok {
			t.Errorf("%s and %s share a palette colour", name, other)
		}
		used[strategyIndex(name, mixed)%len(palette)] = name
	}
	if i := strategyIndex("budget+pacer", mixed); i != len(colours) {
		t.Errorf("budget+pacer: index %d, want %d (after the registered ones)", i, len(colours))
	}
}
