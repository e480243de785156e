// Package markdown holds what the Markdown writers (reports, compare) share.
package markdown

import "strings"

// Escape escapes the characters Markdown, or a table cell, would interpret.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|#", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
