//go:build linux

package run

import "testing"

// Issue 20 item 3: configurations whose names differ only by case,
// accents or punctuation get heap profiles of their own (run/exec: and exec
// directories).
func TestFileNamesPerConfiguration(t *testing.T) {
	for _, pair := range [][2]string{{"Hold", "hold"}, {"x=café", "x=cafè"}, {"x=a b", "x=a-b"}} {
		if a, b := heapProfileName(pair[0], 1), heapProfileName(pair[1], 1); a == b {
			t.Errorf("%q and %q share the heap profile %s", pair[0], pair[1], a)
		}
	}
}
