package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// skip is a test a stream says skipped, with its skip message.
type skip struct {
	stream string
	pkg    string
	test   string
	reason string
}

// stream is what one go test -json stream says about its tests.
type stream struct {
	name  string
	tally tally
	skips []skip
	ran   map[testKey]bool
}

// readStream reads a go test -json stream; errors name file and line.
func readStream(name string, r io.Reader) (stream, error) {
	s := stream{name: name, ran: make(map[testKey]bool)}
	output := make(map[testKey][]string)
	n := 0
	err := readLines(r, func(line []byte) error {
		n++
		e, ok, err := decodeEvent(line)
		switch {
		case err != nil:
			return fmt.Errorf("%s:%d: %w", name, n, err)
		case !ok && len(strings.TrimSpace(string(line))) > 0:
			return fmt.Errorf("%s:%d: not a go test -json event: %.60q", name, n, line)
		case !ok || e.Test == "":
			return nil
		}
		s.tally.add(e)
		k := testKey{e.Package, e.Test}
		switch e.Action {
		case "run":
			s.ran[k] = true
		case "output":
			output[k] = append(output[k], e.Output)
		case "skip":
			s.skips = append(s.skips, skip{stream: filepath.Base(name), pkg: e.Package, test: e.Test, reason: skipMessage(output[k])})
			delete(output, k)
		case "pass", "fail":
			delete(output, k)
		}
		return nil
	})
	return s, err
}

// skipMessage is a skipped test's own lines ("file.go:12: why"), without
// the RUN, PAUSE, CONT, NAME and SKIP lines the framework adds.
func skipMessage(output []string) string {
	var lines []string
	for _, chunk := range output {
		for _, l := range strings.Split(chunk, "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
				continue
			}
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "(no message)"
	}
	return strings.Join(lines, " ")
}

// reportSkips prints the streams' tallies and skipped tests, each with
// its message and, where the allowed list has it, why it may skip. ok is
// false when a test skipped that is not allowed to, or a stream ran no
// test (a suite that compiled to nothing tests nothing).
func reportSkips(args []string, w io.Writer) (ok bool, err error) {
	fs := flag.NewFlagSet("skips", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var lists []string
	fs.Func("allowed", "`file` listing tests that may skip (repeatable)", func(name string) error {
		lists = append(lists, name)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return false, usageError("skips: " + err.Error())
	}
	if fs.NArg() == 0 {
		return false, usageError("skips: no stream named")
	}
	var allowed []allowance
	for _, name := range lists {
		f, err := os.Open(name)
		if err != nil {
			return false, err
		}
		list, err := parseAllowed(name, f)
		f.Close()
		if err != nil {
			return false, err
		}
		allowed = append(allowed, list...)
	}
	var streams []stream
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			return false, fmt.Errorf("%w (a suite that did not run?)", err)
		}
		s, err := readStream(name, f)
		f.Close()
		if err != nil {
			return false, err
		}
		streams = append(streams, s)
	}
	return printSkips(w, streams, allowed), nil
}

func printSkips(w io.Writer, streams []stream, allowed []allowance) (ok bool) {
	ok = true
	var skips []skip
	for _, s := range streams {
		fmt.Fprintf(w, "tests in %s: %s\n", filepath.Base(s.name), s.tally)
		if s.tally == (tally{}) {
			fmt.Fprintf(w, "  FAIL: no test ran in %s\n", filepath.Base(s.name))
			ok = false
		}
		skips = append(skips, s.skips...)
	}
	var refused []skip
	fmt.Fprintf(w, "skipped: %d\n", len(skips))
	for _, sk := range skips {
		fmt.Fprintf(w, "  %s %s (%s): %s\n", sk.pkg, sk.test, sk.stream, sk.reason)
		a, found := allowedFor(allowed, sk)
		if !found {
			fmt.Fprintf(w, "      NOT ALLOWED to skip in CI\n")
			refused = append(refused, sk)
			continue
		}
		fmt.Fprintf(w, "      allowed (%s): %s\n", a.where(), a.reason)
	}
	for _, a := range allowed {
		if !ranAnywhere(streams, a) {
			fmt.Fprintf(w, "note: %s allows %s %s, which none of these streams ran\n", a.where(), a.pkg, a.test)
		}
	}
	if len(refused) > 0 {
		names := make([]string, len(refused))
		for i, sk := range refused {
			names[i] = sk.pkg + " " + sk.test
		}
		fmt.Fprintf(w, "FAIL: %d test(s) skipped that CI must run: %s\n", len(refused), strings.Join(names, ", "))
		ok = false
	}
	return ok
}

func allowedFor(allowed []allowance, sk skip) (allowance, bool) {
	for _, a := range allowed {
		if a.covers(sk.pkg, sk.test) {
			return a, true
		}
	}
	return allowance{}, false
}

func ranAnywhere(streams []stream, a allowance) bool {
	for _, s := range streams {
		for k := range s.ran {
			if a.covers(k.pkg, k.test) {
				return true
			}
		}
	}
	return false
}
