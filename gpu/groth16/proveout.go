package groth16

import (
	"fmt"
	"io"
	"time"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/internal/units"
)

// ProveLog is the prove command's output: one labelled line a step of a
// single proof, from the key to its verification, each time in
// milliseconds. cmd/provebench calls it at each step and prints nothing
// of its own.
type ProveLog struct{ W io.Writer }

// Key is Cache.Log for the prove command: what the cache did for the key.
func (l ProveLog) Key(format string, args ...any) {
	fmt.Fprintf(l.W, "key:       "+format+"\n", args...)
}

// Circuit writes the circuit's sizes.
func (l ProveLog) Circuit(p circuit.Params) {
	fmt.Fprintf(l.W, "circuit:   %s constraints, %d wires (%d public, %d bits), synthesis rounds %d\n",
		units.FormatCount(int64(p.Constraints)), p.NumWires(), circuit.NumPublic, p.NumBits(), p.Rounds)
}

// KeyLoaded writes the key's kind, the bytes of its points and its file.
func (l ProveLog) KeyLoaded(pk *ProvingKey, path string) {
	fmt.Fprintf(l.W, "key:       %s, %s of points (%s)\n", pk.Kind, units.FormatBytes(pk.Bytes()), path)
}

// Backend writes the backend, its devices and how long loading the key
// on them took.
func (l ProveLog) Backend(name string, devices int, load time.Duration) {
	fmt.Fprintf(l.W, "backend:   %s, %d device(s), key loaded in %s\n", name, devices, ms(load))
}

// Synthesis writes how long the partition's synthesis took.
func (l ProveLog) Synthesis(d time.Duration) {
	fmt.Fprintf(l.W, "synthesis: %s\n", ms(d))
}

// Stage writes one of the backend's stages, indented under the proof.
func (l ProveLog) Stage(name string, d time.Duration) {
	fmt.Fprintf(l.W, "  %-12s %s\n", name, ms(d))
}

// Proved writes the proof's whole time.
func (l ProveLog) Proved(total time.Duration) {
	fmt.Fprintf(l.W, "prove:     %s\n", ms(total))
}

// Verified writes the verification's outcome: yes, or no and why (err);
// without a verifying key (a benchmark key) the proof cannot verify.
func (l ProveLog) Verified(vk *VerifyingKey, err error) {
	switch {
	case vk == nil:
		fmt.Fprintln(l.W, "verified:  no (a benchmark key makes proofs that cannot verify; use --key setup)")
	case err != nil:
		fmt.Fprintf(l.W, "verified:  no (%v)\n", err)
	default:
		fmt.Fprintln(l.W, "verified:  yes")
	}
}

// Exported writes the files ExportSnarkJS wrote into dir.
func (l ProveLog) Exported(dir string) {
	fmt.Fprintf(l.W, "wrote:     %s/{proof,public,verification_key}.json (snarkjs groth16, bls12381)\n", dir)
}

// ms formats a duration in milliseconds with sensible precision.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}
