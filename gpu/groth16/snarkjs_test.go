package groth16_test

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/cpu"
	"github.com/provebench/provebench/gpu/groth16"
)

func proveForExport(t *testing.T) (*groth16.VerifyingKey, []fr.Element, *groth16.Proof) {
	t.Helper()
	ctx := context.Background()
	p := circuit.Params{Constraints: 1 << 7}
	pk, vk, err := groth16.Setup(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cpu.New(cpu.Options{})
	defer b.Close()
	if err := b.Load(ctx, pk); err != nil {
		t.Fatal(err)
	}
	ds, err := circuit.Synthesize(ctx, p, 5, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	pub, _ := ds.Public()
	job, err := b.Start(ctx, 0, ds)
	if err != nil {
		t.Fatal(err)
	}
	res, err := job.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return vk, append([]fr.Element(nil), pub...), &res.Proof
}

func TestExportSnarkJSLayout(t *testing.T) {
	vk, pub, proof := proveForExport(t)
	dir := t.TempDir()
	if err := groth16.ExportSnarkJS(dir, vk, pub, proof); err != nil {
		t.Fatal(err)
	}
	var pr struct {
		A        []string   `json:"pi_a"`
		B        [][]string `json:"pi_b"`
		C        []string   `json:"pi_c"`
		Protocol string     `json:"protocol"`
		Curve    string     `json:"curve"`
	}
	readJSON(t, filepath.Join(dir, "proof.json"), &pr)
	if pr.Protocol != "groth16" || pr.Curve != "bls12381" || len(pr.A) != 3 || len(pr.B) != 3 || pr.A[2] != "1" {
		t.Fatalf("proof.json layout: %+v", pr)
	}
	var x big.Int
	proof.Ar.X.BigInt(&x)
	if pr.A[0] != x.String() {
		t.Fatal("pi_a x is not the decimal of Ar.X")
	}
	var public []string
	readJSON(t, filepath.Join(dir, "public.json"), &public)
	if len(public) != len(pub) {
		t.Fatalf("public.json has %d values", len(public))
	}
	var vkj struct {
		NPublic int          `json:"nPublic"`
		IC      [][]string   `json:"IC"`
		AB      [][][]string `json:"vk_alphabeta_12"`
	}
	readJSON(t, filepath.Join(dir, "verification_key.json"), &vkj)
	if vkj.NPublic != len(pub) || len(vkj.IC) != len(pub)+1 || len(vkj.AB) != 2 || len(vkj.AB[0]) != 3 {
		t.Fatalf("verification_key.json layout: %+v", vkj)
	}
}

// TestSnarkJSVerifies hands the export to snarkjs, an independent verifier.
// It needs snarkjs installed (make check-snarkjs does it): set
// PROVEBENCH_SNARKJS to the snarkjs command.
func TestSnarkJSVerifies(t *testing.T) {
	snark := os.Getenv("PROVEBENCH_SNARKJS")
	if snark == "" {
		t.Skip("PROVEBENCH_SNARKJS not set: run `make check-snarkjs` to verify exports with snarkjs")
	}
	vk, pub, proof := proveForExport(t)
	dir := t.TempDir()
	if err := groth16.ExportSnarkJS(dir, vk, pub, proof); err != nil {
		t.Fatal(err)
	}
	verify := func() error {
		return exec.Command(snark, "groth16", "verify",
			filepath.Join(dir, "verification_key.json"), filepath.Join(dir, "public.json"), filepath.Join(dir, "proof.json")).Run()
	}
	if err := verify(); err != nil {
		t.Fatalf("snarkjs rejected a valid proof: %v", err)
	}
	pub[0].SetUint64(99)
	if err := groth16.ExportSnarkJS(dir, vk, pub, proof); err != nil {
		t.Fatal(err)
	}
	if err := verify(); err == nil {
		t.Fatal("snarkjs accepted a proof with a changed public input")
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
