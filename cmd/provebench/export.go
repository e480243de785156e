package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/iden3"
	"github.com/provebench/provebench/internal/atomicfile"
	"github.com/provebench/provebench/scenarios"
)

type exportFlags struct {
	constraints string
	rounds      int
	seed        uint64
	proof       int
	partition   int
	out         string
}

func newExportCmd() *cobra.Command {
	var f exportFlags
	c := &cobra.Command{
		Use:   "export --constraints 2^k --out DIR",
		Short: "Write the circuit and a witness in iden3's .r1cs and .wtns formats (circom, snarkjs)",
		Long: `export writes provebench's circuit at one size as DIR/circuit.r1cs and the
witness of one partition as DIR/witness.wtns, in the binary formats circom
writes and snarkjs reads, so that snarkjs (or any prover of that ecosystem)
proves exactly the statement provebench proves. The witness is the one a
scenario with the same constraints, synthesis_rounds and seed synthesizes for
that proof and partition.`,
		Example: `  provebench export --constraints 2^10 --out snark
  snarkjs r1cs info snark/circuit.r1cs
  snarkjs wtns check snark/circuit.r1cs snark/witness.wtns`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runExport(cmd.Context(), cmd.OutOrStdout(), f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.constraints, "constraints", "2^10", "constraints: a power of two, as 2^k or an integer")
	fl.IntVar(&f.rounds, "rounds", 0, "synthesis cost: S-box rounds per constraint (as workload.synthesis_rounds)")
	fl.Uint64Var(&f.seed, "seed", 1, "base witness seed (as workload.seed)")
	fl.IntVar(&f.proof, "proof", 0, "the proof whose partition's witness to write")
	fl.IntVar(&f.partition, "partition", 0, "the partition whose witness to write")
	fl.StringVar(&f.out, "out", "", "output directory (created if missing)")
	_ = c.MarkFlagRequired("out")
	return c
}

func runExport(ctx context.Context, w io.Writer, f exportFlags) error {
	n, err := scenarios.ParseCount(f.constraints)
	if err != nil {
		return usagef("--constraints: %v", err)
	}
	p := circuit.Params{Constraints: int(n), Rounds: f.rounds}
	if err := p.Validate(); err != nil {
		return usagef("--constraints/--rounds: %v", err)
	}
	if f.proof < 0 || f.partition < 0 {
		return usagef("--proof and --partition must be >= 0")
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return usagef("--out: %v", err)
	}
	ds, err := circuit.Synthesize(ctx, p, circuit.Seed(f.seed, f.proof, f.partition), f.proof, f.partition)
	if err != nil {
		return fmt.Errorf("export: synthesis: %w", err)
	}
	defer ds.Free()
	wires, err := ds.Wires()
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	r1cs, wtns := filepath.Join(f.out, "circuit.r1cs"), filepath.Join(f.out, "witness.wtns")
	if err := writeWith(r1cs, func(w io.Writer) error { return iden3.WriteR1CS(w, p) }); err != nil {
		return err
	}
	if err := writeWith(wtns, func(w io.Writer) error { return iden3.WriteWTNS(w, wires) }); err != nil {
		return err
	}
	iden3.PrintWritten(w, r1cs, wtns, p)
	return nil
}

// writeWith writes a file atomically from an encoder.
func writeWith(path string, encode func(io.Writer) error) error {
	var b bytes.Buffer
	if err := encode(&b); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	return atomicfile.Write(path, b.Bytes())
}
