package docs

import (
	"fmt"
	"strings"
	"testing"
)

// TestNightlyWorkflow keeps the nightly recipe's steps in the order that
// makes it work: the history restored before the night is added, saved
// after, and the change points read from it, with the exit statuses
// `history changes` documents.
func TestNightlyWorkflow(t *testing.T) {
	wf := readYAML(t, "github-actions-nightly.yml")[0]
	if at(t, wf, "on", "schedule", 0, "cron") == nil {
		t.Fatal("no schedule")
	}
	steps, _ := at(t, wf, "jobs", "nightly", "steps").([]any)
	pos := map[string]int{}
	for i, s := range steps {
		m, _ := s.(map[string]any)
		text := fmt.Sprint(m["uses"], " ", m["run"])
		for key, marker := range map[string]string{
			"restore": "actions/cache/restore", "run": "bin/provebench run ", "add": "history add",
			"save": "actions/cache/save", "changes": "history changes", "issue": "gh issue create",
		} {
			if strings.Contains(text, marker) {
				if _, seen := pos[key]; !seen {
					pos[key] = i
				}
			}
		}
	}
	order := []string{"restore", "run", "add", "save", "changes", "issue"}
	for i, k := range order {
		if _, ok := pos[k]; !ok {
			t.Fatalf("no %s step", k)
		}
		if i > 0 && pos[k] < pos[order[i-1]] {
			t.Errorf("the %s step comes before %s", k, order[i-1])
		}
	}
	changes := fmt.Sprint(at(t, steps[pos["changes"]], "run"))
	if !strings.Contains(changes, `test "$code" -eq 0 || test "$code" -eq 3 || test "$code" -eq 4`) {
		t.Error("the changes step does not accept exactly 0, 3 and 4 (history changes' statuses: none, a regression, too young to judge)")
	}
}
