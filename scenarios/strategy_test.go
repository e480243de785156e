package scenarios

import (
	"strings"
	"testing"
)

// The strategies' rules come from their gates (config.Registered), and
// still reach the user beside a field that did not parse: permits too few
// for hold and a pacer without feedback, with target_depth refused by the
// parser.
func TestGateRulesBesideAParseError(t *testing.T) {
	doc := header + "scenarios:\n  - name: a\n    pipeline: {strategy: hold+pacer, partition_workers: 0, pacer: {kp: 0, ki: 0, target_depth: 0}}\n"
	var got []string
	for _, e := range loadErrors(t, doc) {
		got = append(got, e.Error())
	}
	want := []string{
		"pipeline.partition_workers: 0 is too few: the hold+pacer strategy needs at least 1 partition permit",
		"pipeline.pacer.kp: kp and ki are both 0: a controller without feedback cannot hold its target",
		"pipeline.pacer.target_depth: 0: must be greater than 0",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("error %d: %s\nwant it to contain %s", i, got[i], w)
		}
	}
}
