package results

import (
	"fmt"
	"slices"
	"strings"
)

// unfinishedStatuses are the ways a repetition can end without finishing
// its work: each makes run and merge exit 1 (cmd/provebench). A memory limit or a timeout
// is a finding about the configuration, but its figures are missing all
// the same, and a CI job must not pass over them.
var unfinishedStatuses = []Status{StatusFailed, StatusCrashed, StatusMemoryLimit, StatusTimeout}

// Unfinished counts the repetitions (warm-ups included) that ended in one
// of unfinishedStatuses, and says how many of each: "1 memory-limit, 2
// timeout".
func Unfinished(doc *Run) (n int, what string) {
	counts := make(map[Status]int)
	for _, sc := range doc.Scenarios {
		for _, r := range sc.Repetitions {
			if slices.Contains(unfinishedStatuses, r.Status) {
				counts[r.Status]++
				n++
			}
		}
	}
	var parts []string
	for _, s := range unfinishedStatuses {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	return n, strings.Join(parts, ", ")
}
