// Package fsname turns configuration names into file names: safe on any
// file system (lower-case ASCII letters, digits, '.', '_' and '-', so
// case-insensitive ones too, and no path separators or ".."), stable (the
// same name gives the same file in every run, whatever else runs beside
// it) and unique per name: a name the safe form does not spell exactly
// carries a hash of itself, so that `Hold` and `hold`, `x=café` and
// `x=cafè`, `x=a b` and `x=a-b` never share a file.
package fsname

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode"
)

// maxSlug bounds the readable part of a stem.
const maxSlug = 60

// hashLike matches a stem that ends as a hashed one does, which a name
// spelled exactly must not be mistaken for.
var hashLike = regexp.MustCompile(`-[0-9a-f]{8}$`)

// Stem is name's file-name stem: name itself where it is already safe and
// lower-case, else its safe form followed by '-' and 8 hex digits of the
// SHA-256 of name.
func Stem(name string) string {
	s := Slug(name)
	if s == name && !hashLike.MatchString(s) {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	return s + "-" + hex.EncodeToString(sum[:4])
}

// Slug lowercases a name and keeps letters, digits, '.' and '_', turning
// every other run of characters into one '-'; at most maxSlug long, never
// empty, never starting or ending with '-' or '.' (so never "..").
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-.")
	if len(s) > maxSlug {
		s = strings.TrimRight(s[:maxSlug], "-.")
	}
	if s == "" {
		s = "scenario"
	}
	return s
}
