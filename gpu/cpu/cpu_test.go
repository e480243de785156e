package cpu_test

import (
	"context"
	"errors"
	"testing"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/cpu"
	"github.com/provebench/provebench/gpu/groth16"
)

func TestProveVerify(t *testing.T) {
	ctx := context.Background()
	p := circuit.Params{Constraints: 1 << 10, Rounds: 2}
	pk, vk, err := groth16.Setup(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cpu.New(cpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Load(ctx, pk); err != nil {
		t.Fatal(err)
	}
	ds, err := circuit.Synthesize(ctx, p, 42, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	pub, _ := ds.Public()
	pub = append(pub[:0:0], pub...)
	job, err := b.Start(ctx, 0, ds)
	if err != nil {
		t.Fatal(err)
	}
	ds.FreeABC()
	res, err := job.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(vk, pub, &res.Proof); err != nil {
		t.Fatalf("verify: %v (stages %v)", err, res.Stages)
	}
	pub[0].SetUint64(7)
	if err := groth16.Verify(vk, pub, &res.Proof); !errors.Is(err, groth16.ErrInvalidProof) {
		t.Fatalf("changed input: got %v", err)
	}
}
