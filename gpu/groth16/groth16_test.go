package groth16

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/provebench/provebench/gpu/circuit"
)

func TestKeyFileRoundTrip(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 6}
	pk, vk, err := Setup(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pk.CheckShape(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "k.key")
	if err := writeKeyFile(path, pk, vk); err != nil {
		t.Fatal(err)
	}
	pk2, vk2, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	defer pk2.Close()
	if pk2.Kind != KindSetup || vk2 == nil || len(vk2.IC) != len(vk.IC) {
		t.Fatalf("loaded kind %s vk %v", pk2.Kind, vk2)
	}
	for i := range pk.A {
		if !pk.A[i].Equal(&pk2.A[i]) || !pk.B1[i].Equal(&pk2.B1[i]) || !pk.B2[i].Equal(&pk2.B2[i]) {
			t.Fatalf("wire %d differs after the round trip", i)
		}
	}
	for i := range pk.H {
		if !pk.H[i].Equal(&pk2.H[i]) {
			t.Fatalf("H[%d] differs", i)
		}
	}
	if !vk.Gamma2.Equal(&vk2.Gamma2) || !vk.IC[2].Equal(&vk2.IC[2]) || !pk.Delta1.Equal(&pk2.Delta1) {
		t.Fatal("fixed points differ")
	}
	if pk2.Bytes() != pk.Bytes() {
		t.Fatalf("Bytes %d vs %d", pk2.Bytes(), pk.Bytes())
	}
}

func TestSetupKeyShape(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 6}
	pk, _, err := Setup(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pk.B1 {
		if pk.B1[i].IsInfinity() == p.InB(i) || pk.B2[i].IsInfinity() == p.InB(i) {
			t.Fatalf("wire %d: B at infinity %v, InB %v", i, pk.B1[i].IsInfinity(), p.InB(i))
		}
		if pk.A[i].IsInfinity() {
			t.Fatalf("wire %d: A at infinity", i)
		}
	}
}

func TestRandomKey(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 12}
	path := filepath.Join(t.TempDir(), "r.key")
	if err := writeRandomKey(context.Background(), path, p); err != nil {
		t.Fatal(err)
	}
	pk, vk, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	defer pk.Close()
	if vk != nil || pk.Kind != KindRandom || pk.Verifiable() {
		t.Fatal("a random key must not claim to be verifiable")
	}
	seen := map[bls12381.G1Affine]bool{}
	for i := range pk.A {
		for _, pt := range []*bls12381.G1Affine{&pk.A[i], &pk.B1[i]} {
			if pt.IsInfinity() {
				continue
			}
			if !pt.IsOnCurve() || seen[*pt] {
				t.Fatalf("wire %d: point off the curve or repeated", i)
			}
			seen[*pt] = true
		}
		if pk.B1[i].IsInfinity() == p.InB(i) || pk.B2[i].IsInfinity() == p.InB(i) {
			t.Fatalf("wire %d: B infinity pattern differs from the circuit's", i)
		}
		if !pk.B2[i].IsInfinity() && !pk.B2[i].IsOnCurve() {
			t.Fatalf("wire %d: G2 point off the curve", i)
		}
	}
	if !pk.H[len(pk.H)-1].IsInSubGroup() || !pk.L[0].IsInSubGroup() {
		t.Fatal("random points outside the subgroup")
	}
}

func TestCacheGeneratesOnceAndRecovers(t *testing.T) {
	ctx := context.Background()
	var logs int
	c := Cache{Dir: t.TempDir(), Log: func(string, ...any) { logs++ }}
	pk, vk, err := c.Get(ctx, circuit.Params{Constraints: 1 << 6}, KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if pk.Kind != KindSetup || vk == nil {
		t.Fatalf("auto at 2^6 gave %s", pk.Kind)
	}
	pk.Close()
	n := logs
	pk, _, err = c.Get(ctx, circuit.Params{Constraints: 1 << 6}, KindSetup)
	if err != nil {
		t.Fatal(err)
	}
	pk.Close()
	if logs != n {
		t.Fatal("a cached key was generated again")
	}
	// A truncated file (a crash mid-write by an older version, a full disk)
	// is replaced, not misread.
	path := c.Path(circuit.Params{Constraints: 1 << 6}, KindSetup)
	if err := os.Truncate(path, 5000); err != nil {
		t.Fatal(err)
	}
	pk, _, err = c.Get(ctx, circuit.Params{Constraints: 1 << 6}, KindSetup)
	if err != nil {
		t.Fatal(err)
	}
	pk.Close()
	if logs == n {
		t.Fatal("a truncated key was not regenerated")
	}
}

func TestLoadKeyRejectsGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.key")
	if err := os.WriteFile(path, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadKey(path); err == nil {
		t.Fatal("garbage loaded as a key")
	}
}

func TestKindResolve(t *testing.T) {
	if KindAuto.Resolve(AutoSetupMax) != KindSetup || KindAuto.Resolve(2*AutoSetupMax) != KindRandom {
		t.Fatal("auto does not switch at AutoSetupMax")
	}
	if KindRandom.Resolve(64) != KindRandom {
		t.Fatal("explicit kinds must not change")
	}
}

func BenchmarkRandomKey(b *testing.B) {
	for _, lg := range []int{16, 18} {
		p := circuit.Params{Constraints: 1 << lg}
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			for b.Loop() {
				if err := writeRandomKey(context.Background(), filepath.Join(b.TempDir(), "k"), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSetup(b *testing.B) {
	p := circuit.Params{Constraints: 1 << 14}
	for b.Loop() {
		if _, _, err := Setup(p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBatchJacobianToAffineG2(t *testing.T) {
	_, g2, _, _ := bls12381.Generators()
	jac := make([]bls12381.G2Jac, 5)
	for i := range jac {
		jac[i].Set(&g2)
		for range i {
			jac[i].DoubleAssign()
			jac[i].AddAssign(&g2)
		}
	}
	jac[2].Z.SetZero() // infinity in the middle
	got := batchJacobianToAffineG2(jac)
	for i := range jac {
		var want bls12381.G2Affine
		want.FromJacobian(&jac[i])
		if !got[i].Equal(&want) {
			t.Fatalf("point %d differs", i)
		}
	}
}
