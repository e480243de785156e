package markdown

import "testing"

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"a|b_c*d`e":                    `a\|b\_c\*d\` + "`" + `e`,
		"plain 2^20":                   "plain 2^20",
		"<img src=x onerror=alert(1)>": "&lt;img src=x onerror=alert(1)&gt;",
		"&lt;b&gt; & ~~x~~":            `&amp;lt;b&amp;gt; &amp; \~\~x\~\~`,
		"a\n| b |\r\n# c\td":           `a \| b \|  \# c d`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
