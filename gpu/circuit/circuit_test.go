package circuit

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		p  Params
		ok bool
	}{
		{Params{Constraints: 1 << 10}, true},
		{Params{Constraints: 1 << MinLogConstraints}, true},
		{Params{Constraints: 1 << MaxLogConstraints, Rounds: MaxRounds}, true},
		{Params{Constraints: 1000}, false},
		{Params{Constraints: 0}, false},
		{Params{Constraints: 1 << (MinLogConstraints - 1)}, false},
		{Params{Constraints: 1 << (MaxLogConstraints + 1)}, false},
		{Params{Constraints: 1 << 10, Rounds: -1}, false},
		{Params{Constraints: 1 << 10, BitsPerMille: MinBitsPerMille}, true},
		{Params{Constraints: 1 << 10, BitsPerMille: MaxBitsPerMille}, true},
		{Params{Constraints: 1 << 10, BitsPerMille: MinBitsPerMille - 1}, false},
		{Params{Constraints: 1 << 10, BitsPerMille: MaxBitsPerMille + 1}, false},
	} {
		if err := tc.p.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tc.p, err, tc.ok)
		}
	}
}

// TestSynthesisSatisfiesR1CS checks the dataset against the matrices that
// setup uses: a_j = <A_j, z> etc. and a_j * b_j = c_j for every constraint,
// and that the bit wires, and only they, form the tail of the assignment.
func TestSynthesisSatisfiesR1CS(t *testing.T) {
	for _, tc := range []struct{ rounds, bits int }{{0, 0}, {3, 0}, {2, MinBitsPerMille}, {1, 700}, {0, MaxBitsPerMille}} {
		p := Params{Constraints: 1 << 8, Rounds: tc.rounds, BitsPerMille: tc.bits}
		name := fmt.Sprintf("rounds %d bits %.2f", tc.rounds, p.BitFraction())
		ds, err := Synthesize(context.Background(), p, Seed(1, 2, 3), 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		a, b, c, _ := ds.ABC()
		z, _ := ds.Wires()
		if len(z) != p.NumWires() || len(a) != p.Constraints {
			t.Fatalf("%s: shape: %d wires, %d constraints", name, len(z), len(a))
		}
		var eval [3][]fr.Element
		for m := range eval {
			eval[m] = make([]fr.Element, p.Constraints)
		}
		Terms(p, func(tm Term) {
			var x fr.Element
			x.Mul(&tm.Coeff, &z[tm.Wire])
			eval[tm.Matrix][tm.Constraint].Add(&eval[tm.Matrix][tm.Constraint], &x)
		})
		for j := 0; j < p.Constraints; j++ {
			if !eval[MatA][j].Equal(&a[j]) || !eval[MatB][j].Equal(&b[j]) || !eval[MatC][j].Equal(&c[j]) {
				t.Fatalf("%s constraint %d: dataset differs from the matrices", name, j)
			}
			var ab fr.Element
			ab.Mul(&a[j], &b[j])
			if !ab.Equal(&c[j]) {
				t.Fatalf("%s constraint %d: a*b != c", name, j)
			}
		}
		ones := 0
		for i := p.BitWires(); i < len(z); i++ {
			if !z[i].IsZero() && !z[i].IsOne() {
				t.Fatalf("%s: bit wire %d is neither 0 nor 1", name, i)
			}
			if z[i].IsOne() {
				ones++
			}
		}
		nb := p.NumBits()
		if want := (p.NumPrivate()*p.EffectiveBitsPerMille() + 500) / 1000; nb != want {
			t.Errorf("%s: %d bits, want %d", name, nb, want)
		}
		if nb >= 40 && (ones < nb/4 || ones > 3*nb/4) {
			t.Errorf("%s: %d of %d bits are one", name, ones, nb)
		}
		ds.Free()
	}
}

func TestInBMatchesTerms(t *testing.T) {
	for _, bits := range []int{0, MinBitsPerMille, 333, MaxBitsPerMille} {
		p := Params{Constraints: 1 << 6, BitsPerMille: bits}
		inB := make([]bool, p.NumWires())
		Terms(p, func(tm Term) {
			if tm.Matrix == MatB {
				inB[tm.Wire] = true
			}
		})
		for i, want := range inB {
			if p.InB(i) != want {
				t.Errorf("bits %d wire %d: InB = %v, terms say %v", bits, i, p.InB(i), want)
			}
		}
	}
}

func TestSeedsGiveDifferentWitnesses(t *testing.T) {
	p := Params{Constraints: 1 << 6}
	ctx := context.Background()
	d1, _ := Synthesize(ctx, p, Seed(7, 0, 0), 0, 0)
	d2, _ := Synthesize(ctx, p, Seed(7, 0, 1), 0, 1)
	d3, _ := Synthesize(ctx, p, Seed(7, 0, 0), 0, 0)
	defer d1.Free()
	defer d2.Free()
	defer d3.Free()
	p1, _ := d1.Public()
	p2, _ := d2.Public()
	p3, _ := d3.Public()
	if p1[1].Equal(&p2[1]) {
		t.Error("two partitions share their output")
	}
	if !p1[1].Equal(&p3[1]) {
		t.Error("synthesis is not deterministic")
	}
}

func TestSynthesisCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Synthesize(ctx, Params{Constraints: 1 << 10}, 1, 0, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestDatasetBytes(t *testing.T) {
	p := Params{Constraints: 1 << 10}
	abc, wires := p.DatasetBytes()
	if abc != 3*1024*32 || wires != int64(p.NumWires())*32 {
		t.Fatalf("DatasetBytes = %d, %d", abc, wires)
	}
}

func BenchmarkSynthesize(b *testing.B) {
	for _, lg := range []int{12, 14, 16, 18} {
		for _, rounds := range []int{0, 4} {
			p := Params{Constraints: 1 << lg, Rounds: rounds}
			b.Run(fmt.Sprintf("2^%d/rounds=%d", lg, rounds), func(b *testing.B) {
				for b.Loop() {
					ds, err := Synthesize(context.Background(), p, 1, 0, 0)
					if err != nil {
						b.Fatal(err)
					}
					ds.Free()
				}
			})
		}
	}
}
