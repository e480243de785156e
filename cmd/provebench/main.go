// Command provebench benchmarks and memory-profiles GPU proving pipelines:
// it runs YAML scenarios through a real Groth16 prover, samples memory and
// the pipeline's buffer counters, and turns the runs into reports, plots and
// CI verdicts. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/internal/version"
	"github.com/provebench/provebench/scenarios"
)

// Exit statuses.
const (
	exitOK         = 0
	exitFailure    = 1 // the work ran and failed (a proof did not verify, a run failed)
	exitUsage      = 2 // bad input: flags, YAML, files
	exitRegression = 3 // compare or ab found a regression
	// compare or ab found no regression but could not judge a gated metric
	// (an oversubscribed host, an interval holding the threshold, too few
	// samples): never a pass.
	exitInconclusive = 4
	exitInterrupted  = 130 // Ctrl-C
)

// usageError marks bad input, which exits with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitError carries a specific exit status with its message (which may be
// empty when the command already printed what went wrong).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e exitError) Unwrap() error { return e.err }

func main() { os.Exit(executeWithSignals(os.Args[1:], nil)) }

// executeWithSignals runs a command that the first SIGINT or SIGTERM
// cancels. caught, if not nil, is called once they are caught: until
// then a SIGINT kills the process outright, so whoever signals it on
// purpose (a test) waits for that.
func executeWithSignals(args []string, caught func()) int {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	if caught != nil {
		caught()
	}
	// A repetition's child and an exec repetition's supervisor stop at
	// their first signal (the terminal's, the one their parent forwards,
	// or their parent-death signal) and print nothing of it: their
	// output is a pipe to the runner, which may be gone (issue 42 case 4);
	// only the user's process quits at once.
	child := len(args) > 0 && (args[0] == "child" || args[0] == "exec-shim")
	go onInterrupt(sig, cancel, !child, func() { os.Exit(exitInterrupted) })
	return execute(ctx, args)
}

// onInterrupt cancels the run at the first signal: the repetition in flight
// is recorded as cancelled and the finished ones are written. With quit set,
// a second signal ends the process at once (children die with it: their
// parent-death signal), for a user who will not wait for that.
func onInterrupt(sig <-chan os.Signal, cancel func(), quit bool, exit func()) {
	<-sig
	cancel()
	if !quit {
		return
	}
	fmt.Fprintln(os.Stderr, "provebench: interrupted: stopping, finished results are kept (Ctrl-C again to quit at once)")
	<-sig
	fmt.Fprintln(os.Stderr, "provebench: interrupted twice: quitting")
	exit()
}

func execute(ctx context.Context, args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee exitError
	var ue usageError
	var scenarioErrs scenarios.Errors
	switch {
	case errors.As(err, &ee):
		if ee.err != nil && ee.Error() != "" {
			fmt.Fprintln(os.Stderr, "provebench:", ee.Error())
		}
		return ee.code
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// Stopped by the interrupt, however the command classed the
		// error it got (a reader's is bad input otherwise).
		fmt.Fprintln(os.Stderr, "provebench: interrupted")
		return exitInterrupted
	case errors.As(err, &scenarioErrs):
		// Scenario problems are file:line:col: field.path: message from
		// the first column, for editors' and CI's problem matchers.
		fmt.Fprintln(os.Stderr, scenarioErrs.Error())
		return exitUsage
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "provebench:", err)
		return exitUsage
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "provebench: interrupted")
		return exitInterrupted
	default:
		fmt.Fprintln(os.Stderr, "provebench:", err)
		return exitFailure
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "provebench",
		Short: "Benchmark and memory-profile GPU proving pipelines",
		Long: `provebench runs pipeline configurations, written as YAML scenarios, through a
real Groth16 prover (BLS12-381; CPU backend on gnark-crypto, CUDA backend on
ICICLE), samples RSS, GPU memory and the pipeline's buffer counters on one time
axis, and turns the runs into plots, reports and CI verdicts.`,
		Version:       version.Read().Short(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// Without a subcommand, the help; with an unknown one, bad input.
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, ", "))
			}
			return usagef("%s (see '%s --help')", msg, c.CommandPath())
		},
		RunE:                       func(c *cobra.Command, _ []string) error { return c.Help() },
		SuggestionsMinimumDistance: 2,
	}
	root.SetVersionTemplate(version.Read().Long())
	// Flag errors are bad input: exit status 2, with the usage hint.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(newRunCmd(), newValidateCmd(), newSchemaCmd(), newProveCmd(), newReportCmd(), newCompareCmd(), newDetectCmd(), newChildCmd())
	root.AddCommand(newMergeCmd())
	root.AddCommand(newSimulateCmd())
	root.AddCommand(newEngineCmd(), newExecShimCmd(), newExportCmd())
	root.AddCommand(newABCmd())
	root.AddCommand(newCalibrationCmd())
	root.AddCommand(newHistoryCmd())
	return root
}

// exactArgs is cobra.ExactArgs with bad-input exit status.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(c, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs with bad-input exit status.
func minArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(c, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
