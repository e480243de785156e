package groth16

import (
	"context"
	"path/filepath"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/shape"
)

// TestShapeSizes: gpu/shape writes the curve's sizes down so that the
// configuration vocabulary links no field arithmetic; they must be the
// curve's, and a key made here must be as large as shape.KeyBytes says.
func TestShapeSizes(t *testing.T) {
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"ElementBytes (fr.Bytes)", shape.ElementBytes, fr.Bytes},
		{"ElementBytes (dataset's)", shape.ElementBytes, dataset.ElementBytes},
		{"G1Bytes", shape.G1Bytes, bls12381.SizeOfG1AffineUncompressed},
		{"G2Bytes", shape.G2Bytes, bls12381.SizeOfG2AffineUncompressed},
	} {
		if c.got != c.want {
			t.Errorf("shape.%s = %d, the curve's %d", c.what, c.got, c.want)
		}
	}
	p := circuit.Params{Constraints: 1 << 6}
	abc, wires := p.DatasetBytes()
	if abc != dataset.ABCBytes(p.Constraints) || wires != dataset.WireBytes(p.NumWires()) {
		t.Errorf("DatasetBytes %d, %d; dataset's %d, %d", abc, wires, dataset.ABCBytes(p.Constraints), dataset.WireBytes(p.NumWires()))
	}
	path := filepath.Join(t.TempDir(), "r.key")
	if err := writeRandomKey(context.Background(), path, p); err != nil {
		t.Fatal(err)
	}
	pk, _, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	defer pk.Close()
	if got, want := pk.Bytes(), shape.KeyBytes(p); got != want {
		t.Errorf("a key of 2^6 holds %d bytes, shape.KeyBytes says %d", got, want)
	}
	// The CUDA backend precomputes A over the full-width wires, L over
	// the private ones and all of H (gpu/cuda's fullBases).
	full := p.BitWires()
	if full > len(pk.A) || full-(1+shape.NumPublic) > len(pk.L) {
		t.Fatalf("a key of 2^6 has %d A and %d L points, fewer than the %d full-width wires", len(pk.A), len(pk.L), full)
	}
	if got, want := p.FullMSMPoints(), int64(full+full-(1+shape.NumPublic)+len(pk.H)); got != want {
		t.Errorf("FullMSMPoints %d, the key's full-width bases %d", got, want)
	}
}
