package scenarios

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// yaml.v3 names a syntax problem's line in its message, and only its line:
// "yaml: line 4: did not find expected key". Its scanner counts lines from
// 1; its parser reports the 0-based line of the construct it was reading
// (and no line at all for the first). The functions here turn either into
// the line and column every problem of a scenario file is reported at,
// with the file's own bytes for the column.

// yamlLineRE finds the line in yaml.v3's syntax errors.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlAnchorRE finds the anchor an alias problem names.
var yamlAnchorRE = regexp.MustCompile(`^yaml: (?:unknown anchor|anchor) '([^']*)'`)

// parserProblems are the messages of yaml.v3's parser (parserc.go): a line
// it prints is 0-based, one less than the line an editor shows.
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected key",
	"did not find expected '-' indicator",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found duplicate %TAG directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// syntaxPosition locates a yaml.v3 error in data: the 1-based line and
// column, and the message without yaml.v3's prefix. It falls back to 1:1.
func syntaxPosition(data []byte, err error) (line, col int, msg string) {
	text := err.Error()
	msg = strings.TrimPrefix(text, "yaml: ")
	line = 1
	if m := yamlLineRE.FindStringSubmatch(text); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if isParserProblem(msg) {
			line++
		}
	} else if isParserProblem(msg) {
		line = 1 // yaml.v3 leaves out line 0, the first
	} else if m := yamlAnchorRE.FindStringSubmatch(text); m != nil {
		if l, c, ok := findAlias(data, m[1]); ok {
			return l, c, msg
		}
	}
	if tabProblem(msg) {
		// A scanner names the line of the token it was reading, which can
		// be above the tab.
		if l, c, ok := findTab(data, line); ok {
			return l, c, msg
		}
	}
	return line, lineColumn(lineText(data, line), msg), msg
}

// tabProblem reports the messages a tab causes: YAML indents with spaces.
func tabProblem(msg string) bool {
	return strings.Contains(msg, "tab") || strings.Contains(msg, "cannot start any token")
}

// findTab is the first tab at or after the 1-based line.
func findTab(data []byte, line int) (int, int, bool) {
	start := 0
	for i := 1; i < line && start < len(data); i++ {
		j := bytes.IndexByte(data[start:], '\n')
		if j < 0 {
			return 0, 0, false
		}
		start += j + 1
	}
	i := bytes.IndexByte(data[start:], '\t')
	if i < 0 {
		return 0, 0, false
	}
	l, c := offsetPosition(data, start+i)
	return l, c, true
}

func isParserProblem(msg string) bool {
	for _, p := range parserProblems {
		if msg == p {
			return true
		}
	}
	return false
}

// lineText is the 1-based line of data, without its line break; empty past
// the end.
func lineText(data []byte, line int) []byte {
	for i := 1; i < line; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return nil
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return data
}

// lineColumn is the column to report on a line yaml.v3 named: the flow
// collection left open, when the problem is a missing close; else the
// line's first character that is not a space, else 1.
func lineColumn(text []byte, msg string) int {
	for _, pair := range []string{"[]", "{}"} {
		if strings.HasSuffix(msg, "'"+pair[1:]+"'") {
			if i := lastUnclosed(text, pair[0], pair[1]); i >= 0 {
				return utf8.RuneCount(text[:i]) + 1
			}
		}
	}
	if i := bytes.IndexFunc(text, func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' }); i >= 0 {
		return utf8.RuneCount(text[:i]) + 1
	}
	return 1
}

// lastUnclosed is the offset of the last open that the line does not
// close, or -1. Quotes are not followed: the column is a pointer for the
// eye, and yaml.v3 has already named the line.
func lastUnclosed(text []byte, open, close byte) int {
	var opens []int
	for i, c := range text {
		switch c {
		case open:
			opens = append(opens, i)
		case close:
			if len(opens) > 0 {
				opens = opens[:len(opens)-1]
			}
		}
	}
	if len(opens) == 0 {
		return -1
	}
	return opens[len(opens)-1]
}

// findAlias is where *name is first written in data.
func findAlias(data []byte, name string) (line, col int, ok bool) {
	want := []byte("*" + name)
	for off := 0; ; {
		i := bytes.Index(data[off:], want)
		if i < 0 {
			return 0, 0, false
		}
		end := off + i + len(want)
		if end == len(data) || bytes.IndexByte([]byte(" \t\r\n,]}"), data[end]) >= 0 {
			line, col = offsetPosition(data, off+i)
			return line, col, true
		}
		off = end
	}
}

// offsetPosition is the 1-based line and column (in characters) of a byte
// offset.
func offsetPosition(data []byte, off int) (line, col int) {
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

// encodingProblem finds the first byte a YAML reader refuses in a UTF-8
// file: an invalid UTF-8 sequence, or a control character YAML does not
// allow (anything below space but tab, line feed and carriage return; DEL;
// the C1 controls but NEL). yaml.v3 reports these without a line. A file
// starting with a UTF-16 byte order mark is left to yaml.v3, which reads
// it. ok is false when there is nothing to report.
func encodingProblem(data []byte) (line, col int, msg string, ok bool) {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return 0, 0, "", false
	}
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		switch {
		case r == utf8.RuneError && size <= 1:
			msg = "not UTF-8: byte 0x" + strconv.FormatUint(uint64(data[off]), 16) + " (save the file as UTF-8)"
		case !yamlPrintable(r):
			msg = "control character " + strconv.QuoteRune(r) + " is not allowed in YAML"
		default:
			off += size
			continue
		}
		line, col = offsetPosition(data, off)
		return line, col, msg, true
	}
	return 0, 0, "", false
}

// yamlPrintable is YAML 1.2's c-printable, which a file may contain.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return false
	case r >= 0xd800 && r <= 0xdfff, r == 0xfffe, r == 0xffff:
		return false
	}
	return true
}
