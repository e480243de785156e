package fsname

import (
	"strings"
	"testing"
)

// Issue 20 item 3: names that differ only by case, accents or punctuation
// get different stems, the same in every call.
func TestStemUniqueAndStable(t *testing.T) {
	groups := [][]string{
		{"Hold", "hold", "HOLD"},
		{"x=café", "x=cafè", "x=cafe"},
		{"x=a b", "x=a-b", "x-a-b", "x=a_b"},
		{"sweep/pw=4", "sweep_pw=4", "sweep-pw-4"},
		{"..", "../..", "", "???", "scenario"},
		{strings.Repeat("a", 70), strings.Repeat("a", 71)},
		{"hold-0123abcd", "hold"},
	}
	for _, g := range groups {
		seen := map[string]string{}
		for _, name := range g {
			s := Stem(name)
			if other, ok := seen[s]; ok {
				t.Errorf("%q and %q share the stem %q", name, other, s)
			}
			seen[s] = name
			if Stem(name) != s {
				t.Errorf("%q: stem not stable", name)
			}
			if strings.ContainsAny(s, "/\\ =:") || s == "." || s == ".." || strings.HasPrefix(s, ".") || s != strings.ToLower(s) {
				t.Errorf("%q: stem %q is not a safe file name", name, s)
			}
		}
	}
	if Stem("hold") != "hold" || Stem("release-c1") != "release-c1" {
		t.Errorf("a safe name is not its own stem: %q, %q", Stem("hold"), Stem("release-c1"))
	}
}
