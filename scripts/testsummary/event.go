package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// event is one line of go test -json: test2json's TestEvent, plus the
// build events go test adds (build-output, build-fail) for a package that
// does not compile, which name it by ImportPath instead of Package.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
	ImportPath  string
}

// decodeEvent reads one JSON line; ok is false for a line that is not an
// event (go test also prints plain lines, such as a panic of its own).
func decodeEvent(line []byte) (e event, ok bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return event{}, false, nil
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return event{}, false, err
	}
	if e.Action == "" {
		return event{}, false, fmt.Errorf("no Action")
	}
	return e, true, nil
}

// readLines calls fn with each line of r, newline included, however long.
func readLines(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if ferr := fn(line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// testKey names a test within one stream.
type testKey struct{ pkg, test string }

// tally counts test results (subtests included; packages are not tests).
type tally struct{ passed, skipped, failed int }

func (t *tally) add(e event) {
	if e.Test == "" {
		return
	}
	switch e.Action {
	case "pass":
		t.passed++
	case "skip":
		t.skipped++
	case "fail":
		t.failed++
	}
}

func (t tally) String() string {
	return fmt.Sprintf("%d passed, %d skipped, %d failed", t.passed, t.skipped, t.failed)
}
