package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// options are the command line: the workload in provebench's terms
// (scenarios' workload section), the key, and what to print.
type options struct {
	constraints  int
	partitions   int // per proof
	proofs       int
	bitsPerMille int
	rounds       int
	seed         uint64
	key          string // auto | setup | random
	warmups      int
	verify       string // auto | true | false
	timeline     bool
	bench        int // > 0: benchmark mode, iterations of each benchmark
	benchKinds   map[string]bool
	memInterval  time.Duration
	version      bool

	// ICICLE build only.
	pinKeys          bool
	icicleDevice     string
	icicleBackendDir string
}

// Key kinds, as provebench's scenarios name them.
const (
	keyAuto   = "auto"
	keySetup  = "setup"
	keyRandom = "random"
	// realSetupMaxLog is where auto stops making a real setup (provebench's
	// key: auto is a real setup up to 2^16).
	realSetupMaxLog = 16
)

// parseOptions reads args; a bad value is an error naming the flag.
func parseOptions(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("peer-gnark", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var constraints, fraction, kinds string
	fs.StringVar(&constraints, "constraints", "2^12", "constraints per partition: a power of two, as 2^k or a number (2^5..2^27)")
	fs.IntVar(&o.partitions, "partitions", 4, "partitions per proof")
	fs.IntVar(&o.proofs, "proofs", 1, "proofs")
	fs.StringVar(&fraction, "bit-fraction", "0.5", "share of private wires that are bits (0.05..0.95), provebench's workload.bit_fraction")
	fs.IntVar(&o.rounds, "synthesis-rounds", 0, "S-box rounds per constraint deriving the witness, provebench's workload.synthesis_rounds")
	fs.Uint64Var(&o.seed, "seed", 1, "witness seed, provebench's workload.seed")
	fs.StringVar(&o.key, "key", keyAuto, "setup (gnark's real setup: proofs verify) | random (gnark's DummySetup: same sizes, proofs do not verify) | auto (setup up to 2^16)")
	fs.IntVar(&o.warmups, "warmups", 1, "partitions proved before the measured run, outside it (keys to the device, kernels loaded)")
	fs.StringVar(&o.verify, "verify", "auto", "verify every proof after the run with gnark's verifier: auto (with a real key) | true | false")
	fs.BoolVar(&o.timeline, "timeline", false, "print cuzk-format TIMELINE lines on stderr")
	fs.IntVar(&o.bench, "bench", 0, "benchmark mode: N iterations each of BenchmarkPeer/<prover>/2^k/single and /steady, Go benchmark lines on stdout")
	fs.StringVar(&kinds, "bench-kinds", "single,steady", "benchmark mode: which benchmarks, comma-separated")
	fs.DurationVar(&o.memInterval, "device-memory-interval", 50*time.Millisecond, "how often to print the device memory ICICLE reports (0: at partition boundaries only)")
	fs.BoolVar(&o.version, "version", false, "print the commit this binary was built from and exit")
	fs.BoolVar(&o.pinKeys, "pin-keys", true, "ICICLE: keep the proving key on the device between proofs (gnark's PinToGPU), as a warm prover daemon does")
	fs.StringVar(&o.icicleDevice, "icicle-device", "CUDA", "ICICLE: the device type, CUDA or CPU (ICICLE's CPU device, for a host without a GPU)")
	fs.StringVar(&o.icicleBackendDir, "icicle-backend-dir", os.Getenv("ICICLE_BACKEND_INSTALL_DIR"), "ICICLE: the folder of libicicle_backend_*.so (default $ICICLE_BACKEND_INSTALL_DIR)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	n, err := parseSize(constraints)
	if err != nil {
		return nil, fmt.Errorf("--constraints: %w", err)
	}
	o.constraints = n
	f, err := strconv.ParseFloat(fraction, 64)
	if err != nil || math.IsNaN(f) {
		return nil, fmt.Errorf("--bit-fraction %q: not a number", fraction)
	}
	o.bitsPerMille = int(math.Round(f * 1000))
	o.benchKinds = map[string]bool{}
	for _, k := range strings.Split(kinds, ",") {
		if k = strings.TrimSpace(k); k != "single" && k != "steady" {
			return nil, fmt.Errorf("--bench-kinds: %q: want single and/or steady", k)
		}
		o.benchKinds[k] = true
	}
	if _, err := newShape(o.constraints, o.bitsPerMille); err != nil {
		return nil, fmt.Errorf("--constraints/--bit-fraction: %w", err)
	}
	return o, o.check()
}

func (o *options) check() error {
	switch {
	case o.partitions < 1:
		return fmt.Errorf("--partitions %d: want at least 1", o.partitions)
	case o.proofs < 1:
		return fmt.Errorf("--proofs %d: want at least 1", o.proofs)
	case o.rounds < 0 || o.rounds > 10000:
		return fmt.Errorf("--synthesis-rounds %d: want 0..10000", o.rounds)
	case o.warmups < 0:
		return fmt.Errorf("--warmups %d: want at least 0", o.warmups)
	case o.bench < 0:
		return fmt.Errorf("--bench %d: want at least 0", o.bench)
	case o.memInterval < 0:
		return fmt.Errorf("--device-memory-interval %s: want at least 0", o.memInterval)
	}
	if o.key != keyAuto && o.key != keySetup && o.key != keyRandom {
		return fmt.Errorf("--key %q: want auto, setup or random", o.key)
	}
	if o.verify != "auto" && o.verify != "true" && o.verify != "false" {
		return fmt.Errorf("--verify %q: want auto, true or false", o.verify)
	}
	if o.verify == "true" && !o.realKey() {
		return errors.New("--verify true needs a real key (--key setup, or auto up to 2^16): a DummySetup key's proofs do not verify")
	}
	return nil
}

// parseSize reads 2^k or a plain number.
func parseSize(s string) (int, error) {
	s = strings.TrimSpace(s)
	if k, ok := strings.CutPrefix(s, "2^"); ok {
		lg, err := strconv.Atoi(k)
		if err != nil || lg < 0 || lg > 40 {
			return 0, fmt.Errorf("%q: want 2^k", s)
		}
		return 1 << lg, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q: want 2^k or a number", s)
	}
	return n, nil
}

// realKey reports whether the key is gnark's real setup.
func (o *options) realKey() bool {
	switch o.key {
	case keySetup:
		return true
	case keyRandom:
		return false
	}
	return o.constraints <= 1<<realSetupMaxLog
}

// verifying reports whether proofs are verified after the run.
func (o *options) verifying() bool {
	switch o.verify {
	case "true":
		return true
	case "false":
		return false
	}
	return o.realKey()
}
