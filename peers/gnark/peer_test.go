package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

// counts are the non-zero terms of each matrix and the wires with a term in
// B (the G2 MSM's wires).
type counts struct {
	a, b, c, inB int
}

// wantCounts walks provebench's circuit as gpu/circuit's Terms writes it.
func wantCounts(s shape) counts {
	var n counts
	pending := 0
	for j := 0; j < s.steps(); j++ {
		if s.isBitStep(j) {
			n.a, n.b = n.a+1, n.b+2 // b * (b - 1)
			pending++
			continue
		}
		n.a, n.b, n.c = n.a+2, n.b+pending+1, n.c+1 // (s + cA) * (sum + cB) = s'
		pending = 0
	}
	n.a, n.b, n.c = n.a+1, n.b+1, n.c+1 // s_last * 1 = Out
	n.a += numPublic + 1                // w * 0 = 0
	n.inB = 1 + s.numBits()             // the one wire and the bits
	return n
}

func compiled(t *testing.T, s shape) constraint.ConstraintSystem {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, newChain(s))
	if err != nil {
		t.Fatal(err)
	}
	return ccs
}

// TestShapeIsProvebenchs holds the compiled system to provebench's circuit:
// N constraints, N-1 wires, the same public inputs, bits and non-zero terms
// in each matrix, at bit fractions above and below one half (below, some
// mixing steps consume no bits: the frontend would fold them away).
func TestShapeIsProvebenchs(t *testing.T) {
	for _, tc := range []struct{ lg, perMille int }{{5, 500}, {10, 500}, {10, 50}, {10, 300}, {10, 950}, {12, 700}} {
		t.Run(fmt.Sprintf("2^%d/%d", tc.lg, tc.perMille), func(t *testing.T) {
			s, err := newShape(1<<tc.lg, tc.perMille)
			if err != nil {
				t.Fatal(err)
			}
			ccs := compiled(t, s)
			if got := ccs.GetNbConstraints(); got != s.n {
				t.Errorf("constraints %d, want %d", got, s.n)
			}
			wires := ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables() + ccs.GetNbInternalVariables()
			if wires != s.numWires() || wires != s.n-1 {
				t.Errorf("wires %d, want %d", wires, s.numWires())
			}
			if pub, sec := ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables(); pub != 1+numPublic || sec != s.numBits() {
				t.Errorf("public %d (with the one wire), secret %d; want %d, %d", pub, sec, 1+numPublic, s.numBits())
			}
			var got counts
			inB := map[uint32]bool{}
			nonZero := func(l constraint.LinearExpression, n *int, cols map[uint32]bool) {
				for _, term := range l {
					if term.CID != constraint.CoeffIdZero {
						*n++
						if cols != nil {
							cols[term.VID] = true
						}
					}
				}
			}
			it := ccs.(interface{ GetR1CIterator() constraint.R1CIterator }).GetR1CIterator()
			for c := it.Next(); c != nil; c = it.Next() {
				nonZero(c.L, &got.a, nil)
				nonZero(c.R, &got.b, inB)
				nonZero(c.O, &got.c, nil)
			}
			got.inB = len(inB)
			if want := wantCounts(s); got != want {
				t.Errorf("terms (A, B, C, wires in B) %+v, want %+v", got, want)
			}
		})
	}
}

// TestProofsVerify proves partitions with gnark's real setup at 2^10..2^14
// and checks them with gnark's verifier (the run verifies and fails
// otherwise), and that a proof of another statement does not verify.
func TestProofsVerify(t *testing.T) {
	sizes := []string{"2^10", "2^12", "2^14"}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for i, size := range sizes {
		t.Run(size, func(t *testing.T) {
			fraction := []string{"0.5", "0.3", "0.8"}[i]
			var out, errOut bytes.Buffer
			args := []string{"--constraints", size, "--partitions", "2", "--key", "setup", "--bit-fraction", fraction, "--synthesis-rounds", "2"}
			if code := run(context.Background(), args, &out, &errOut); code != exitOK {
				t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), "PEER_VERIFIED proofs=2") {
				t.Fatalf("no verification line:\n%s", out.String())
			}
		})
	}
	t.Run("wrong-statement", func(t *testing.T) {
		o := &options{constraints: 1 << 10, bitsPerMille: 500, partitions: 1, proofs: 1, key: keySetup, verify: "true", seed: 1}
		r, err := newRunner(o, &bytes.Buffer{}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.provePartition(context.Background(), 0, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		other, err := assign(context.Background(), r.shape, partitionSeed(2, 0, 0), 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.pub, err = other.public(); err != nil {
			t.Fatal(err)
		}
		if err := r.verify([]*partition{p}); err == nil {
			t.Fatal("a proof verified against another statement's public inputs")
		}
	})
}

var timelineLine = regexp.MustCompile(`^TIMELINE,([0-9.]+),(SYNTH_START|SYNTH_END|GPU_START|GPU_END),(\d+),(\d+)$`)

// TestTimeline checks the TIMELINE lines: each partition's four events in
// order, offsets not decreasing, every partition of every proof once.
func TestTimeline(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"--constraints", "2^8", "--partitions", "3", "--proofs", "2", "--timeline", "--key", "random"}
	if code := run(context.Background(), args, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	order := []string{"SYNTH_START", "SYNTH_END", "GPU_START", "GPU_END"}
	seen := map[string]int{}
	last := -1.0
	for _, line := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
		m := timelineLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("not a TIMELINE line: %q", line)
		}
		var at float64
		fmt.Sscan(m[1], &at)
		if !(at >= last) { // NaN fails too
			t.Errorf("offset %v after %v", at, last)
		}
		last = at
		job := m[3] + "/" + m[4]
		if k := seen[job]; k >= len(order) || order[k] != m[2] {
			t.Errorf("job %s: %s after %d events", job, m[2], k)
		}
		seen[job]++
	}
	if len(seen) != 6 {
		t.Errorf("%d partitions in the timeline, want 6", len(seen))
	}
	for job, n := range seen {
		if n != len(order) {
			t.Errorf("job %s: %d events, want %d", job, n, len(order))
		}
	}
	if !strings.Contains(out.String(), "PEER_SUMMARY prover="+proverName+" partitions=6") {
		t.Errorf("no summary:\n%s", out.String())
	}
}

// TestBenchLines checks the benchmark mode's lines.
func TestBenchLines(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"--constraints", "2^8", "--partitions", "2", "--bench", "3", "--key", "random"}
	if code := run(context.Background(), args, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	single := regexp.MustCompile(`^BenchmarkPeer/` + proverName + `/2\^8/single 1 \d+ ns/op [0-9.]+ ms/partition.* [0-9.]+ solve-ms/op`)
	steady := regexp.MustCompile(`^BenchmarkPeer/` + proverName + `/2\^8/steady 2 \d+ ns/op [0-9.]+ ms/partition [0-9.]+ wall-ms/partition`)
	n := map[string]int{}
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case single.MatchString(line):
			n["single"]++
		case steady.MatchString(line):
			n["steady"]++
		}
	}
	if n["single"] != 3 || n["steady"] != 3 {
		t.Errorf("%v benchmark lines, want 3 of each:\n%s", n, out.String())
	}
}

// TestBadInput: bad flags exit 2 with the flag named.
func TestBadInput(t *testing.T) {
	for args, want := range map[string]string{
		"--constraints 1000":               "--constraints/--bit-fraction",
		"--constraints 2^4":                "outside 2^5..2^27",
		"--bit-fraction 0.99":              "bit fraction",
		"--partitions 0":                   "--partitions",
		"--key real":                       "--key",
		"--constraints 2^20 --verify true": "needs a real key",
		"--bench-kinds single,fast":        "--bench-kinds",
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), strings.Fields(args), &out, &errOut)
		if code != exitUsage || !strings.Contains(errOut.String(), want) {
			t.Errorf("%s: exit %d, %q; want exit 2 naming %q", args, code, errOut.String(), want)
		}
	}
}

// TestPublicMatchesProvebench: the peer proves provebench's statements. It
// proves partitions as the peer's run does (provePartition, gnark's real
// setup) and checks each proof against the public inputs provebench derives
// for the same seed, proof and partition. The first workload is
// peer-gnark.yaml's (seed 1, bit fraction 0.5, no synthesis rounds), the one
// TestPeerGnarkScenario in cmd/provebench runs the peer binary on: that test
// sees the peer's timings only (the peer prints no public input or proof,
// and its key is its own setup), so this is where a peer that proves another
// statement fails. Partitions past the first, and a second proof's, bring
// the proof and partition into the seed. Skipped when bin/provebench is not
// built (make build).
func TestPublicMatchesProvebench(t *testing.T) {
	bin, err := filepath.Abs("../../bin/provebench")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/provebench is not built (make build)")
	}
	for _, tc := range []provebenchWorkload{
		{name: "peer-gnark", seed: 1, rounds: 0, fraction: "0.5", jobs: [][2]int{{0, 0}, {0, 3}, {1, 2}}},
		// provebench prove takes the bit fraction export lacks, for
		// proof 0's partition 0 only.
		{name: "rounds-fraction", seed: 7, rounds: 3, fraction: "0.3", jobs: [][2]int{{0, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--constraints", "2^10", "--key", "setup", "--seed", strconv.FormatUint(tc.seed, 10),
				"--synthesis-rounds", strconv.Itoa(tc.rounds), "--bit-fraction", tc.fraction}
			o, err := parseOptions(args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			r, err := newRunner(o, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			defer r.p.close()
			for _, job := range tc.jobs {
				proof, index := job[0], job[1]
				want := tc.public(t, bin, proof, index)
				p, err := r.provePartition(context.Background(), proof, index, true)
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := p.pub.Vector().(fr.Vector); !slices.Equal(got, want) {
					t.Errorf("proof %d partition %d: the peer's public inputs %v, provebench's %v", proof, index, got, want)
					continue
				}
				pub, err := encodeWitness(want, numPublic)
				if err != nil {
					t.Fatal(err)
				}
				if err := groth16.Verify(p.pr, r.vk, pub); err != nil {
					t.Errorf("proof %d partition %d: the peer's proof does not verify against provebench's public inputs: %v", proof, index, err)
				}
			}
		})
	}
}

// provebenchWorkload is a workload at 2^10 constraints and the partitions
// (proof, partition) of it to compare.
type provebenchWorkload struct {
	name     string
	seed     uint64
	rounds   int
	fraction string
	jobs     [][2]int
}

// public is provebench's public inputs (In, Out) of one partition: wires 1
// and 2 of provebench export's witness at the default bit fraction (0.5),
// provebench prove's public.json at another (prove proves proof 0's
// partition 0 only).
func (w provebenchWorkload) public(t *testing.T, bin string, proof, partition int) fr.Vector {
	t.Helper()
	dir := t.TempDir()
	common := []string{"--constraints", "2^10", "--seed", strconv.FormatUint(w.seed, 10), "--rounds", strconv.Itoa(w.rounds), "--out", dir}
	if w.fraction != "0.5" {
		if proof != 0 || partition != 0 {
			t.Fatalf("provebench prove proves proof 0 partition 0 only, not proof %d partition %d", proof, partition)
		}
		args := append([]string{"prove", "--bit-fraction", w.fraction, "--cache", dir}, common...)
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("provebench %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		data, err := os.ReadFile(filepath.Join(dir, "public.json"))
		if err != nil {
			t.Fatal(err)
		}
		var decimal []string
		if err := json.Unmarshal(data, &decimal); err != nil {
			t.Fatalf("public.json: %v", err)
		}
		v := make(fr.Vector, len(decimal))
		for i, s := range decimal {
			if _, err := v[i].SetString(s); err != nil {
				t.Fatalf("public.json[%d]: %v", i, err)
			}
		}
		if len(v) != numPublic {
			t.Fatalf("public.json: %d public inputs, want %d", len(v), numPublic)
		}
		return v
	}
	args := append([]string{"export", "--proof", strconv.Itoa(proof), "--partition", strconv.Itoa(partition)}, common...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("provebench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "witness.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	wires, err := wtnsValues(data)
	if err != nil {
		t.Fatalf("witness.wtns: %v", err)
	}
	if len(wires) < 1+numPublic || !wires[0].IsOne() {
		t.Fatalf("witness.wtns: %d wires, the first %v; want the one wire, then In and Out", len(wires), wires[:min(1, len(wires))])
	}
	return wires[1 : 1+numPublic]
}

// wtnsValues reads the values section of an iden3 .wtns file (gpu/iden3's
// layout: "wtns", a uint32 version and section count, then sections of a
// uint32 type, a uint64 size and the content; section 1 starts with the
// element size n8, section 2 holds the values, little-endian, standard
// form).
func wtnsValues(data []byte) (fr.Vector, error) {
	if len(data) < 12 || string(data[:4]) != "wtns" {
		return nil, errors.New("not a .wtns file")
	}
	var n8 uint32
	for rest := data[12:]; len(rest) > 0; {
		if len(rest) < 12 {
			return nil, fmt.Errorf("a section header of %d bytes", len(rest))
		}
		typ, size := binary.LittleEndian.Uint32(rest), binary.LittleEndian.Uint64(rest[4:])
		rest = rest[12:]
		if size > uint64(len(rest)) {
			return nil, fmt.Errorf("section %d: %d bytes, %d left", typ, size, len(rest))
		}
		body := rest[:size]
		rest = rest[size:]
		switch {
		case typ == 1 && len(body) >= 4:
			n8 = binary.LittleEndian.Uint32(body)
		case typ == 2:
			if n8 != fr.Bytes || len(body)%fr.Bytes != 0 {
				return nil, fmt.Errorf("values of %d bytes in elements of %d, want %d", len(body), n8, fr.Bytes)
			}
			v := make(fr.Vector, len(body)/fr.Bytes)
			for i := range v {
				e, err := fr.LittleEndian.Element((*[fr.Bytes]byte)(body[i*fr.Bytes:]))
				if err != nil {
					return nil, fmt.Errorf("value %d: %w", i, err)
				}
				v[i] = e
			}
			return v, nil
		}
	}
	return nil, errors.New("no values section")
}

// TestBenchScript runs scripts/peer/bench.sh on bin/peer-gnark (make
// peer-gnark; skipped when it is not built): a header, the prover's commit,
// and PEER_BENCH_COUNT lines of each benchmark; a count under 3 is refused.
func TestBenchScript(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bin/peer-gnark")); err != nil {
		t.Skip("bin/peer-gnark is not built (make peer-gnark)")
	}
	script := func(env ...string) (string, error) {
		cmd := exec.Command("scripts/peer/bench.sh")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), append([]string{"PEER_BENCH_PROVERS=gnark-cpu", "PEER_BENCH_LOG=8", "PEER_BENCH_PARTITIONS=2"}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := script()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"\ngoarch: ", "\nprover: gnark-cpu\ncommit: "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if n, m := strings.Count(out, "BenchmarkPeer/gnark-cpu/2^8/single 1 "), strings.Count(out, "BenchmarkPeer/gnark-cpu/2^8/steady 2 "); n != 3 || m != 3 {
		t.Errorf("%d single and %d steady lines, want 3 of each:\n%s", n, m, out)
	}
	out, err = script("PEER_BENCH_COUNT=2")
	if code := exitCode(err); code != exitUsage || !strings.Contains(out, "at least 3") {
		t.Errorf("PEER_BENCH_COUNT=2: exit %d, %q; want 2", code, out)
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
