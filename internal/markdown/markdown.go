// Package markdown holds what the Markdown writers (reports, compare) share.
package markdown

import (
	"strings"
	"unicode"
)

// Escape makes s literal text wherever a Markdown document holds it: a
// paragraph, a heading, a table cell. The characters Markdown interprets
// are backslash-escaped; those of HTML are written as entities (<, > and
// &: a backslash before < is not honoured by every renderer, and & would
// start an entity), so a name such as "<img src=x onerror=...>" never
// becomes markup; line breaks and other control characters, which would
// end a cell or a heading and start a line of Markdown of their own, are
// written as spaces.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case unicode.IsControl(r):
			b.WriteByte(' ')
		case strings.ContainsRune("\\`*_[]|#~", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
