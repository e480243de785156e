// Command peer-gnark proves provebench's circuit family with gnark's Groth16
// over BLS12-381: on the CPU (gnark-crypto), or with -tags icicle on ICICLE
// through gnark's backend/accelerated/icicle/groth16. It is a peer prover for
// provebench's exec driver: it proves proofs x partitions partitions one after
// the other, as gnark's Prove is called, and prints cuzk-format TIMELINE
// lines (--timeline), its own stage times and, on ICICLE, the device memory
// ICICLE reports. With --bench N it prints Go benchmark lines instead
// (BenchmarkPeer/<prover>/2^k/single and /steady). See docs/peer.md.
//
// Exit status: 0 ok, 1 a proof failed or did not verify, 2 bad input, 130
// interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "peer-gnark: %v\n", err)
		return exitUsage
	}
	if o.version {
		fmt.Fprintf(stdout, "peer-gnark %s commit %s gnark %s\n", proverName, revision(), moduleVersion("github.com/consensys/gnark"))
		return exitOK
	}
	r, err := newRunner(o, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "peer-gnark: %v\n", err)
		return exitFailure
	}
	defer r.p.close()
	if o.bench > 0 {
		err = r.bench(ctx)
	} else {
		err = r.run(ctx)
	}
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "peer-gnark: interrupted: %v\n", err)
		return exitInterrupted
	default:
		fmt.Fprintf(stderr, "peer-gnark: %v\n", err)
		return exitFailure
	}
}

// buildRevision is the commit the binary was built from, set by the linker
// (mk/peer.mk: -X main.buildRevision=...), as provebench's benchmark
// binaries are: VCS stamping is not there in every checkout.
var buildRevision string

// revision is the commit the binary was built from ("-dirty" when the tree
// had changes), or "unknown".
func revision() string {
	if buildRevision != "" {
		return buildRevision
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "unknown", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "unknown"
}
