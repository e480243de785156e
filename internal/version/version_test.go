package version

import (
	"regexp"
	"testing"
)

func TestRevision(t *testing.T) {
	for _, tc := range []struct {
		info Info
		want string
	}{
		{Info{}, ""},
		{Info{Commit: "abc123"}, "abc123"},
		{Info{Commit: "abc123", Modified: true}, "abc123+dirty"},
	} {
		if got := tc.info.Revision(); got != tc.want {
			t.Errorf("%+v: Revision() = %q, want %q", tc.info, got, tc.want)
		}
	}
}

func TestExecutableSHA256(t *testing.T) {
	a, err := ExecutableSHA256()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ExecutableSHA256()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(a) || a != b {
		t.Errorf("hash %q, then %q", a, b)
	}
}
