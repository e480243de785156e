package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/spf13/cobra"

	"github.com/provebench/provebench/gpu/backends"
	"github.com/provebench/provebench/gpu/catalog"
	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/scenarios"
)

type proveFlags struct {
	constraints string
	rounds      int
	bitFraction float64
	seed        uint64
	out         string
	backend     string
	key         string
	cacheDir    string
}

func newProveCmd() *cobra.Command {
	var f proveFlags
	c := &cobra.Command{
		Use:   "prove",
		Short: "Prove one partition end to end and verify it",
		Long: `prove runs the whole prover once: key (from the key cache, a real setup up to
2^16 constraints by default), synthesis, the NTT region, the MSMs, assembly and
verification. It prints each stage's time and whether the proof verified, and
with --out writes proof.json, public.json and verification_key.json in the
snarkjs groth16 layout (curve bls12381) for an independent verifier.

It exits 0 only if the proof verified: a benchmark key (--key random) makes
proofs that cannot verify.`,
		Example: "  provebench prove --constraints 2^12 --out proof-2^12",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runProve(cmd.Context(), cmd.OutOrStdout(), f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.constraints, "constraints", "2^12", "constraints per partition: a power of two, as 2^k or an integer")
	fl.IntVar(&f.rounds, "rounds", 0, "synthesis cost: S-box rounds per constraint")
	fl.Float64Var(&f.bitFraction, "bit-fraction", 0.5, "share of the private wires that are bits")
	fl.Uint64Var(&f.seed, "seed", 1, "witness seed")
	fl.StringVar(&f.out, "out", "", "directory for proof.json, public.json, verification_key.json (created if missing)")
	fl.StringVar(&f.backend, "backend", backends.CPU, "prover backend: "+catalog.Doc())
	fl.StringVar(&f.key, "key", "auto", "proving key: setup (real, verifiable), random (benchmark) or auto (setup up to 2^16)")
	fl.StringVar(&f.cacheDir, "cache", groth16.DefaultCacheDir(), "key cache directory")
	return c
}

func runProve(ctx context.Context, w io.Writer, f proveFlags) error {
	p, kind, err := proveParams(f)
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return usagef("--out: %v", err)
		}
	}

	log := groth16.ProveLog{W: w}
	cache := groth16.Cache{Dir: f.cacheDir, Log: log.Key}
	pk, vk, err := cache.Get(ctx, p, kind)
	if err != nil {
		return fmt.Errorf("proving key: %w", err)
	}
	defer pk.Close()

	be, err := openProveBackend(f.backend)
	if err != nil {
		return usagef("--backend: %v", err)
	}
	defer be.Close()
	log.Circuit(p)
	log.KeyLoaded(pk, cache.Path(p, pk.Kind))
	t := time.Now()
	if err := be.Load(ctx, pk); err != nil {
		return fmt.Errorf("load key on %s backend: %w", be.Name(), err)
	}
	log.Backend(be.Name(), be.Devices(), time.Since(t))

	public, res, err := proveOne(ctx, log, be, p, f.seed)
	if err != nil {
		return err
	}
	return verifyProof(log, vk, public, res, f.out)
}

// proveParams reads the circuit and the kind of key the flags ask for.
func proveParams(f proveFlags) (circuit.Params, groth16.KeyKind, error) {
	n, err := scenarios.ParseCount(f.constraints)
	if err != nil {
		return circuit.Params{}, "", usagef("--constraints: %v", err)
	}
	bits, err := circuit.BitsPerMilleFor(f.bitFraction)
	if err != nil {
		return circuit.Params{}, "", usagef("--bit-fraction: %v", err)
	}
	p := circuit.Params{Constraints: int(n), Rounds: f.rounds, BitsPerMille: bits}
	if err := p.Validate(); err != nil {
		return circuit.Params{}, "", usagef("--constraints/--rounds/--bit-fraction: %v", err)
	}
	kind := groth16.KeyKind(f.key)
	if kind != groth16.KindAuto && kind != groth16.KindSetup && kind != groth16.KindRandom {
		return circuit.Params{}, "", usagef("--key: %q is not setup, random or auto", f.key)
	}
	return p, kind, nil
}

// proveOne synthesizes one partition and proves it on be, printing each
// step's time; it returns the public inputs (a copy: the dataset is freed)
// and the proof.
func proveOne(ctx context.Context, log groth16.ProveLog, be prover.Backend, p circuit.Params, seed uint64) ([]fr.Element, prover.Result, error) {
	t := time.Now()
	ds, err := circuit.Synthesize(ctx, p, circuit.Seed(seed, 0, 0), 0, 0)
	if err != nil {
		return nil, prover.Result{}, fmt.Errorf("synthesis: %w", err)
	}
	defer ds.Free()
	log.Synthesis(time.Since(t))
	public, err := ds.Public()
	if err != nil {
		return nil, prover.Result{}, err
	}
	public = append([]fr.Element(nil), public...)

	t = time.Now()
	job, err := be.Start(ctx, 0, ds)
	if err != nil {
		return nil, prover.Result{}, fmt.Errorf("prove: %w", err)
	}
	ds.FreeABC()
	res, err := job.Wait()
	if err != nil {
		return nil, prover.Result{}, fmt.Errorf("prove: %w", err)
	}
	total := time.Since(t)
	for _, s := range res.Stages {
		log.Stage(s.Name, s.Duration)
	}
	log.Proved(total)
	return public, res, nil
}

// verifyProof verifies the proof (exit 1 when it does not, or cannot:
// a benchmark key) and exports it for snarkjs into out, when given.
func verifyProof(log groth16.ProveLog, vk *groth16.VerifyingKey, public []fr.Element, res prover.Result, out string) error {
	var err error
	if vk != nil {
		err = groth16.Verify(vk, public, &res.Proof)
	}
	log.Verified(vk, err)
	if vk == nil || err != nil {
		return exitError{code: exitFailure}
	}
	if out != "" {
		if err := groth16.ExportSnarkJS(out, vk, public, &res.Proof); err != nil {
			return err
		}
		log.Exported(out)
	}
	return nil
}

// openProveBackend opens the named backend; for auto on the CPU it says
// why CUDA was not used, on stderr.
func openProveBackend(name string) (prover.Backend, error) {
	be, why, err := backends.OpenExplained(name, backends.Options{})
	if err == nil && why != nil {
		backends.WarnNotCUDA(os.Stderr, why)
	}
	return be, err
}
