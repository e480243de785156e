package compare

import (
	"strings"

	"github.com/provebench/provebench/results"
)

// matchKey returns how the scenarios of base and cur are paired. Names are
// scoped by scenario file, and a run of several files qualifies the names
// they share (ci:release), so a name alone does not say which
// configuration it is: when both documents record every scenario's file,
// scenarios pair by file and name as written (ci:release in a run of two
// files meets release in a run of ci.yaml alone). Documents written before
// names were scoped pair by name, and so do the two sides of an ab run
// (paired): ab ran the configurations they share by name, from each
// side's own scenario files (release in base.yaml against hold in
// new.yaml), whose files differ by design.
func matchKey(base, cur *results.Run, paired bool) func(*results.Scenario) string {
	if paired || !allScoped(base) || !allScoped(cur) {
		return func(sc *results.Scenario) string { return sc.Name }
	}
	return func(sc *results.Scenario) string {
		return sc.File + ":" + strings.TrimPrefix(sc.Name, sc.File+":")
	}
}

func allScoped(run *results.Run) bool {
	for i := range run.Scenarios {
		if run.Scenarios[i].File == "" {
			return false
		}
	}
	return true
}

// MissingScenarios lists the baseline's configurations that the new run
// does not have: an incomplete or filtered run, which must not pass a gate
// by leaving out what it would have failed.
func (r *Report) MissingScenarios() []string {
	var names []string
	for i := range r.Scenarios {
		if r.Scenarios[i].Verdict == Missing {
			names = append(names, r.Scenarios[i].Name)
		}
	}
	return names
}
