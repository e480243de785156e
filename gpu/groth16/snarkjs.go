package groth16

import (
	"encoding/json"
	"fmt"
	"math/big"
	"path/filepath"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/internal/atomicfile"
)

// The snarkjs groth16 JSON layout (proof.json, public.json,
// verification_key.json), curve "bls12381": numbers as decimal strings, G1
// points as [x, y, "1"], G2 points as [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]].
// An independent verifier (`snarkjs groth16 verify`) can check what
// provebench proves.

type snarkProof struct {
	A        [3]string    `json:"pi_a"`
	B        [3][2]string `json:"pi_b"`
	C        [3]string    `json:"pi_c"`
	Protocol string       `json:"protocol"`
	Curve    string       `json:"curve"`
}

type snarkVK struct {
	Protocol  string          `json:"protocol"`
	Curve     string          `json:"curve"`
	NPublic   int             `json:"nPublic"`
	Alpha1    [3]string       `json:"vk_alpha_1"`
	Beta2     [3][2]string    `json:"vk_beta_2"`
	Gamma2    [3][2]string    `json:"vk_gamma_2"`
	Delta2    [3][2]string    `json:"vk_delta_2"`
	AlphaBeta [2][3][2]string `json:"vk_alphabeta_12"`
	IC        [][3]string     `json:"IC"`
}

func fpDec(e *fp.Element) string {
	var b big.Int
	return e.BigInt(&b).String()
}

func g1JSON(p *bls12381.G1Affine) [3]string {
	if p.IsInfinity() {
		return [3]string{"0", "1", "0"}
	}
	return [3]string{fpDec(&p.X), fpDec(&p.Y), "1"}
}

func e2JSON(e *bls12381.E2) [2]string { return [2]string{fpDec(&e.A0), fpDec(&e.A1)} }

func g2JSON(p *bls12381.G2Affine) [3][2]string {
	if p.IsInfinity() {
		return [3][2]string{{"0", "0"}, {"1", "0"}, {"0", "0"}}
	}
	return [3][2]string{e2JSON(&p.X), e2JSON(&p.Y), {"1", "0"}}
}

// ExportSnarkJS writes proof.json, public.json and verification_key.json into
// dir.
func ExportSnarkJS(dir string, vk *VerifyingKey, public []fr.Element, p *Proof) error {
	alphaBeta, err := bls12381.Pair([]bls12381.G1Affine{vk.Alpha1}, []bls12381.G2Affine{vk.Beta2})
	if err != nil {
		return fmt.Errorf("snarkjs export: e(alpha, beta): %w", err)
	}
	v := snarkVK{
		Protocol: "groth16", Curve: "bls12381", NPublic: len(public),
		Alpha1: g1JSON(&vk.Alpha1), Beta2: g2JSON(&vk.Beta2),
		Gamma2: g2JSON(&vk.Gamma2), Delta2: g2JSON(&vk.Delta2),
	}
	for i, e6 := range []*bls12381.E6{&alphaBeta.C0, &alphaBeta.C1} {
		v.AlphaBeta[i] = [3][2]string{e2JSON(&e6.B0), e2JSON(&e6.B1), e2JSON(&e6.B2)}
	}
	for i := range vk.IC {
		v.IC = append(v.IC, g1JSON(&vk.IC[i]))
	}
	pub := make([]string, len(public))
	for i := range public {
		var b big.Int
		pub[i] = public[i].BigInt(&b).String()
	}
	proof := snarkProof{A: g1JSON(&p.Ar), B: g2JSON(&p.Bs), C: g1JSON(&p.Krs), Protocol: "groth16", Curve: "bls12381"}
	for name, doc := range map[string]any{"proof.json": proof, "public.json": pub, "verification_key.json": v} {
		data, err := json.MarshalIndent(doc, "", " ")
		if err != nil {
			return fmt.Errorf("snarkjs export: %s: %w", name, err)
		}
		if err := atomicfile.Write(filepath.Join(dir, name), append(data, '\n')); err != nil {
			return fmt.Errorf("snarkjs export: %w", err)
		}
	}
	return nil
}
