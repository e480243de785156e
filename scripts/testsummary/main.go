// Command testsummary reads go test's JSON event streams (test2json) for
// CI: it runs a go test -json command, keeping the stream in a file and
// printing what go test without -json would (package lines, failing tests'
// output, build errors), and it lists the tests the streams say skipped,
// with their skip messages, failing when one of them is not in the list of
// tests allowed to skip in CI.
//
//	testsummary run -json out/unit.json -- go test -json ./...
//	testsummary skips -allowed .ci/allowed-skips out/unit.json out/cuda.json
//
// run exits with the command's status (1 when the stream shows a failure
// the status does not). skips exits 1 when a test skipped that may not, and
// 2 on bad input (an unreadable stream or list, a malformed line: the error
// names file and line). make test writes the streams when TESTJSON is set
// (mk/test.mk); .ci/run reads them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailed   = 1 // a test failed (run) or skipped when it may not (skips)
	exitBadInput = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return exitBadInput
	}
	var err error
	switch args[0] {
	case "run":
		var code int
		code, err = runCommand(ctx, args[1:], stdout, stderr)
		if err == nil {
			return code
		}
	case "skips":
		var ok bool
		ok, err = reportSkips(args[1:], stdout)
		if err == nil && !ok {
			return exitFailed
		}
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return exitOK
	default:
		err = usageError(fmt.Sprintf("unknown command %q", args[0]))
	}
	if err != nil {
		fmt.Fprintln(stderr, "testsummary:", err)
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintln(stderr, usage)
		}
		return exitBadInput
	}
	return exitOK
}

const usage = `usage:
  testsummary run -json FILE -- go test -json [flags] [packages]
  testsummary skips [-allowed FILE]... STREAM...`

// usageError is a mistake in the command line; the usage follows it.
type usageError string

func (e usageError) Error() string { return string(e) }
