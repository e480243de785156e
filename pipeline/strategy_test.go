package pipeline

import (
	"testing"

	"github.com/provebench/provebench/pipeline/config"
)

// Every registered gate has its maker, and a ticket has room for one gate
// per group plus the synthesis cap.
func TestEveryGateHasItsMaker(t *testing.T) {
	makers := gateMakers()
	groups := map[string]bool{}
	for _, d := range config.Registered() {
		if makers[d.Name] == nil {
			t.Errorf("%s: registered in pipeline/config, but pipeline has no maker for its gate", d.Name)
		}
		g := d.Group
		if g == "" {
			g = string(d.Name)
		}
		groups[g] = true
	}
	if len(makers) != len(config.Registered()) {
		t.Errorf("%d makers for %d registered gates", len(makers), len(config.Registered()))
	}
	if len(groups)+1 > maxGates {
		t.Errorf("%d groups and the synthesis cap do not fit a ticket's %d gates", len(groups), maxGates)
	}
}
