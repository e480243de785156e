package markdown

import "testing"

func TestEscape(t *testing.T) {
	if got := Escape("a|b_c*d`e"); got != `a\|b\_c\*d\`+"`"+`e` {
		t.Fatalf("Escape = %q", got)
	}
	if Escape("plain 2^20") != "plain 2^20" {
		t.Fatal("plain text changed")
	}
}
