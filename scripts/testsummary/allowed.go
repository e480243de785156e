package main

import (
	"fmt"
	"io"
	"strings"
)

// allowance is one line of the allowed-skips list: a test that may skip in
// CI, and why. A line reads
//
//	PACKAGE TEST REASON...
//
// PACKAGE is an import path or its tail (gpu/cuda matches
// github.com/provebench/provebench/gpu/cuda); TEST is a test's name and
// covers its subtests. Blank lines and lines starting with # are comments.
type allowance struct {
	file   string
	line   int
	pkg    string
	test   string
	reason string
}

func (a allowance) covers(pkg, test string) bool {
	return (pkg == a.pkg || strings.HasSuffix(pkg, "/"+a.pkg)) &&
		(test == a.test || strings.HasPrefix(test, a.test+"/"))
}

func (a allowance) where() string { return fmt.Sprintf("%s:%d", a.file, a.line) }

// parseAllowed reads an allowed-skips list; errors name file and line.
func parseAllowed(name string, r io.Reader) ([]allowance, error) {
	var list []allowance
	n := 0
	err := readLines(r, func(line []byte) error {
		n++
		text := strings.TrimSpace(string(line))
		if text == "" || strings.HasPrefix(text, "#") {
			return nil
		}
		fields := strings.Fields(text)
		a := allowance{file: name, line: n}
		switch len(fields) {
		case 1:
			return fmt.Errorf("%s:%d: test: missing (a line is PACKAGE TEST REASON)", name, n)
		case 2:
			return fmt.Errorf("%s:%d: reason: missing: say why %s may skip in CI", name, n, fields[1])
		}
		a.pkg, a.test = strings.Trim(fields[0], "/"), fields[1]
		a.reason = strings.Join(fields[2:], " ")
		if a.pkg == "" {
			return fmt.Errorf("%s:%d: package: empty", name, n)
		}
		if !strings.HasPrefix(a.test, "Test") && !strings.HasPrefix(a.test, "Example") && !strings.HasPrefix(a.test, "Fuzz") {
			return fmt.Errorf("%s:%d: test: %q is not a test's name (Test..., Example..., Fuzz...)", name, n, a.test)
		}
		for _, b := range list {
			if b.pkg == a.pkg && b.test == a.test {
				return fmt.Errorf("%s:%d: test: %s %s is already allowed at line %d", name, n, a.pkg, a.test, b.line)
			}
		}
		list = append(list, a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}
