package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a scenario file, located as precisely as the
// problem allows: the value that is wrong, or the scenario when the problem
// is a combination of values.
type Error struct {
	File   string
	Line   int // 1-based; 0 when the problem has no line (the file cannot be read), printed as 1
	Column int // 1-based; 0 when unknown, printed as 1
	// Path is the field's place in the document, such as
	// scenarios[2].pipeline.channel_capacity; empty for problems of the
	// whole file.
	Path string
	Msg  string
}

// Error formats the problem as file:line:col: path: message, the form
// editors and CI annotations recognise. A problem of the whole file (it
// cannot be read, it is empty) is placed at 1:1, a line without a column
// at its column 1, so that every problem reads the same way.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: ", e.File, max(1, e.Line), max(1, e.Column))
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one load, in file order and then by
// position. Load returns it as its error whenever it is not empty.
type Errors []*Error

// Error prints one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes the problems to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// errorList collects problems, dropping exact repeats: a bad default is
// reported once, not once per scenario that inherits it.
type errorList struct {
	errs Errors
	seen map[Error]bool
}

func (l *errorList) add(e *Error) {
	if l.seen == nil {
		l.seen = make(map[Error]bool)
	}
	if l.seen[*e] {
		return
	}
	l.seen[*e] = true
	l.errs = append(l.errs, e)
}

// sorted returns the problems ordered by file (in the order the files were
// given), line and column, so they read top to bottom.
func (l *errorList) sorted(fileOrder []string) Errors {
	rank := make(map[string]int, len(fileOrder))
	for i, f := range fileOrder {
		if _, ok := rank[f]; !ok {
			rank[f] = i
		}
	}
	es := slices.Clone(l.errs)
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(rank[a.File], rank[b.File]),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column),
		)
	})
	return es
}
