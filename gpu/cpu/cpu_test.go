package cpu_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/cpu"
	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/prover"
)

// keys caches setups across tests: a setup is the slow part.
var keys sync.Map // [2]int{constraints, bits per mille} -> *keyPair

type keyPair struct {
	pk *groth16.ProvingKey
	vk *groth16.VerifyingKey
}

func setup(t testing.TB, p circuit.Params) (*groth16.ProvingKey, *groth16.VerifyingKey) {
	t.Helper()
	id := [2]int{p.Constraints, p.EffectiveBitsPerMille()}
	if kp, ok := keys.Load(id); ok {
		return kp.(*keyPair).pk, kp.(*keyPair).vk
	}
	pk, vk, err := groth16.Setup(circuit.Params{Constraints: p.Constraints, BitsPerMille: p.BitsPerMille}, nil)
	if err != nil {
		t.Fatal(err)
	}
	keys.Store(id, &keyPair{pk, vk})
	return pk, vk
}

func newBackend(t testing.TB, opts cpu.Options, pk *groth16.ProvingKey) *cpu.Backend {
	t.Helper()
	b, err := cpu.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.Load(context.Background(), pk); err != nil {
		t.Fatal(err)
	}
	return b
}

// prove synthesizes and proves one partition, returning its public inputs.
func prove(t testing.TB, b prover.Backend, dev int, p circuit.Params, seed uint64, tamper func(*dataset.Dataset)) ([]fr.Element, prover.Result, error) {
	t.Helper()
	ds, err := circuit.Synthesize(context.Background(), p, seed, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	if tamper != nil {
		tamper(ds)
	}
	pub, _ := ds.Public()
	pub = append([]fr.Element(nil), pub...)
	job, err := b.Start(context.Background(), dev, ds)
	if err != nil {
		return nil, prover.Result{}, err
	}
	ds.FreeABC() // the early free: Start's contract says a/b/c are done
	res, err := job.Wait()
	return pub, res, err
}

func TestProofsVerifyAtSeveralSizes(t *testing.T) {
	for _, lg := range []int{5, 8, 11} {
		t.Run(fmt.Sprintf("2^%d", lg), func(t *testing.T) {
			p := circuit.Params{Constraints: 1 << lg, Rounds: 1}
			pk, vk := setup(t, p)
			b := newBackend(t, cpu.Options{}, pk)
			pub, res, err := prove(t, b, 0, p, uint64(lg), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(vk, pub, &res.Proof); err != nil {
				t.Fatal(err)
			}
			pub[0].SetUint64(7)
			if err := groth16.Verify(vk, pub, &res.Proof); !errors.Is(err, groth16.ErrInvalidProof) {
				t.Fatalf("a changed public input verified: %v", err)
			}
			names := map[string]bool{}
			for _, s := range res.Stages {
				names[s.Name] = true
			}
			for _, want := range []string{prover.StageNTT, prover.StageMSMA, prover.StageMSMB2, prover.StageMSMH, prover.StageAssemble} {
				if !names[want] {
					t.Errorf("stage %s missing from %v", want, res.Stages)
				}
			}
		})
	}
}

// TestBitFractionsVerify proves at the ends of the bit fraction's range:
// the MSM split moves with it.
func TestBitFractionsVerify(t *testing.T) {
	for _, bits := range []int{circuit.MinBitsPerMille, 800, circuit.MaxBitsPerMille} {
		p := circuit.Params{Constraints: 1 << 9, Rounds: 1, BitsPerMille: bits}
		pk, vk := setup(t, p)
		b := newBackend(t, cpu.Options{}, pk)
		pub, res, err := prove(t, b, 0, p, 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(vk, pub, &res.Proof); err != nil {
			t.Errorf("bit fraction %.2f: %v", p.BitFraction(), err)
		}
	}
}

func TestTamperedWitnessFails(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 8}
	pk, vk := setup(t, p)
	b := newBackend(t, cpu.Options{}, pk)
	for name, tamper := range map[string]func(*dataset.Dataset){
		// a wire the a/b/c vectors disagree with
		"wire": func(ds *dataset.Dataset) {
			z, _ := ds.Wires()
			z[len(z)/4].SetUint64(12345)
		},
		// a bit wire that is not a bit: the bit sums must still count it
		"bit": func(ds *dataset.Dataset) {
			z, _ := ds.Wires()
			z[len(z)-3].SetUint64(2)
		},
		// an unsatisfied constraint: a*b != c
		"constraint": func(ds *dataset.Dataset) {
			_, _, c, _ := ds.ABC()
			c[9].SetUint64(1)
		},
	} {
		pub, res, err := prove(t, b, 0, p, 3, tamper)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(vk, pub, &res.Proof); !errors.Is(err, groth16.ErrInvalidProof) {
			t.Errorf("%s tampered: verify = %v, want ErrInvalidProof", name, err)
		}
	}
}

// seeded returns a reader of deterministic blinding randomness.
func seeded(seed uint64) *bytes.Reader {
	r := rand.New(rand.NewPCG(seed, seed))
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	return bytes.NewReader(buf)
}

func TestThreadsAndDevicesDoNotChangeProofs(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 9, Rounds: 2}
	pk, vk := setup(t, p)
	var proofs []groth16.Proof
	for _, opts := range []cpu.Options{
		{Threads: 1, Rand: seeded(1)},
		{Threads: 2, Rand: seeded(1)},
		{Devices: 3, Threads: 1, Rand: seeded(1)},
	} {
		b := newBackend(t, opts, pk)
		pub, res, err := prove(t, b, b.Devices()-1, p, 11, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(vk, pub, &res.Proof); err != nil {
			t.Fatal(err)
		}
		proofs = append(proofs, res.Proof)
	}
	for i := 1; i < len(proofs); i++ {
		if proofs[i] != proofs[0] {
			t.Fatalf("proof %d differs from proof 0 with the same witness and blinding", i)
		}
	}
}

func TestConcurrentJobsAndStats(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 8}
	pk, vk := setup(t, p)
	b := newBackend(t, cpu.Options{Devices: 2}, pk)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pub, res, err := prove(t, b, i%2, p, uint64(100+i), nil)
			if err == nil {
				err = groth16.Verify(vk, pub, &res.Proof)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for d := range 2 {
		st := b.Stats(d)
		if st.MemoryBytes != 0 || st.Queued != 0 || st.Busy <= 0 {
			t.Errorf("device %d after all jobs: %+v (want no memory, nothing queued, some busy time)", d, st)
		}
	}
}

func TestCancelledStartFreesEverything(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 8}
	pk, _ := setup(t, p)
	b := newBackend(t, cpu.Options{}, pk)
	ds, err := circuit.Synthesize(context.Background(), p, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Free()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Start(ctx, 0, ds); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a cancelled context: %v", err)
	}
	if st := b.Stats(0); st.MemoryBytes != 0 {
		t.Fatalf("quotient buffer leaked: %+v", st)
	}
}

func TestStartRejectsMismatches(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 8}
	pk, _ := setup(t, p)
	b := newBackend(t, cpu.Options{}, pk)
	small, _ := circuit.Synthesize(context.Background(), circuit.Params{Constraints: 1 << 6}, 1, 0, 0)
	defer small.Free()
	if _, err := b.Start(context.Background(), 0, small); err == nil {
		t.Error("a dataset of another size was accepted")
	}
	if _, err := b.Start(context.Background(), 5, small); err == nil {
		t.Error("a device out of range was accepted")
	}
	fresh, _ := cpu.New(cpu.Options{})
	defer fresh.Close()
	if _, err := fresh.Start(context.Background(), 0, small); err == nil {
		t.Error("Start before Load was accepted")
	}
}
