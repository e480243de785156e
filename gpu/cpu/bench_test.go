package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/cpu"
	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/internal/benchenv"
	"github.com/provebench/provebench/gpu/prover"
)

// Benchmarks for the CPU prover's stages, and the yardstick it is held to:
// BenchmarkRaw is the sum of the gnark-crypto calls a partition needs (seven
// FFTs of N, four G1 MSMs and one G2 MSM of the key's sizes), with nothing
// else; BenchmarkProve is a partition proved through the backend. The target
// is Prove <= 1.15 x Raw at each size.
//
// Sizes: PROVEBENCH_BENCH_LOG=12,14,16,18 (the default). Keys come from the
// key cache (PROVEBENCH_CACHE, or a temporary directory).

func benchKey(b *testing.B, p circuit.Params) *groth16.ProvingKey {
	b.Helper()
	dir := os.Getenv("PROVEBENCH_CACHE")
	if dir == "" {
		dir = b.TempDir()
	}
	// Benchmark keys cost what real ones cost to prove with and are
	// generated in seconds at any size.
	pk, _, err := groth16.Cache{Dir: dir}.Get(context.Background(), p, groth16.KindRandom)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pk.Close() })
	return pk
}

func BenchmarkProve(b *testing.B) {
	for _, lg := range benchenv.LogSizes(b, "12,14,16,18") {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			benchenv.LogRevision(b)
			p := benchenv.Params(b, lg)
			pk := benchKey(b, p)
			be, err := cpu.New(cpu.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			if err := be.Load(context.Background(), pk); err != nil {
				b.Fatal(err)
			}
			stages := map[string]time.Duration{}
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				ds, err := circuit.Synthesize(context.Background(), p, uint64(i), 0, 0)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				job, err := be.Start(context.Background(), 0, ds)
				if err != nil {
					b.Fatal(err)
				}
				res, err := job.Wait()
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				ds.Free()
				for _, s := range res.Stages {
					stages[s.Name] += s.Duration
				}
				b.StartTimer()
			}
			for name, d := range stages {
				b.ReportMetric(float64(d.Milliseconds())/float64(b.N), name+"-ms/op")
			}
		})
	}
}

func BenchmarkRaw(b *testing.B) {
	for _, lg := range benchenv.LogSizes(b, "12,14,16,18") {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			raw := newRawCalls(b, benchenv.Params(b, lg))
			var fftT, msmT time.Duration
			for b.Loop() {
				f, m := raw.run(b)
				fftT += f
				msmT += m
			}
			b.ReportMetric(float64(fftT.Milliseconds())/float64(b.N), "fft-ms/op")
			b.ReportMetric(float64(msmT.Milliseconds())/float64(b.N), "msm-ms/op")
		})
	}
}

// BenchmarkProveVsRaw alternates one partition proved through the backend
// and the raw calls on the same size, so both see the same machine (load,
// frequency, caches), and reports their ratio: the 1.15x target.
func BenchmarkProveVsRaw(b *testing.B) {
	for _, lg := range benchenv.LogSizes(b, "12,14,16,18") {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			p := benchenv.Params(b, lg)
			raw := newRawCalls(b, p)
			be, err := cpu.New(cpu.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			if err := be.Load(context.Background(), raw.pk); err != nil {
				b.Fatal(err)
			}
			var proveT, rawT time.Duration
			for i := 0; b.Loop(); i++ {
				ds, err := circuit.Synthesize(context.Background(), p, uint64(i), 0, 0)
				if err != nil {
					b.Fatal(err)
				}
				t := time.Now()
				job, err := be.Start(context.Background(), 0, ds)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := job.Wait(); err != nil {
					b.Fatal(err)
				}
				proveT += time.Since(t)
				ds.Free()
				f, m := raw.run(b)
				rawT += f + m
			}
			b.ReportMetric(float64(proveT.Milliseconds())/float64(b.N), "prove-ms/op")
			b.ReportMetric(float64(rawT.Milliseconds())/float64(b.N), "raw-ms/op")
			b.ReportMetric(proveT.Seconds()/rawT.Seconds(), "prove/raw")
		})
	}
}

// rawCalls are the gnark-crypto calls one partition needs, on the same
// sizes, points and wires as the prover, with nothing around them.
type rawCalls struct {
	pk    *groth16.ProvingKey
	wires []fr.Element
	dom   *fft.Domain
	vecs  [][]fr.Element
	n     int
}

func newRawCalls(b *testing.B, p circuit.Params) *rawCalls {
	n := p.Constraints
	pk := benchKey(b, p)
	ds, err := circuit.Synthesize(context.Background(), p, 1, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ds.Free() })
	wires, _ := ds.Wires()
	r := &rawCalls{pk: pk, wires: wires, dom: fft.NewDomain(uint64(n)), n: n, vecs: make([][]fr.Element, 4)}
	for i := range r.vecs {
		r.vecs[i] = make([]fr.Element, n)
		for j := range r.vecs[i] {
			r.vecs[i][j].MustSetRandom()
		}
	}
	return r
}

func (r *rawCalls) run(b *testing.B) (fftT, msmT time.Duration) {
	threads := runtime.GOMAXPROCS(0)
	cfg := ecc.MultiExpConfig{NbTasks: threads}
	tasks := fft.WithNbTasks(threads)
	t := time.Now()
	for _, v := range r.vecs[:3] {
		r.dom.FFTInverse(v, fft.DIF, tasks)
		r.dom.FFT(v, fft.DIT, fft.OnCoset(), tasks)
	}
	r.dom.FFTInverse(r.vecs[3], fft.DIF, fft.OnCoset(), tasks)
	fftT = time.Since(t)
	t = time.Now()
	pk := r.pk
	var g1 bls12381.G1Jac
	var g2 bls12381.G2Jac
	_, errA := g1.MultiExp(pk.A, r.wires, cfg)
	_, errB1 := g1.MultiExp(pk.B1, r.wires, cfg)
	_, errB2 := g2.MultiExp(pk.B2, r.wires, cfg)
	_, errL := g1.MultiExp(pk.L, r.wires[1+pk.NumPublic:], cfg)
	_, errH := g1.MultiExp(pk.H, r.vecs[3][:r.n-1], cfg)
	if err := errors.Join(errA, errB1, errB2, errL, errH); err != nil {
		b.Fatal(err)
	}
	return fftT, time.Since(t)
}

// BenchmarkSteadyState proves partitions back to back through the
// backend, two in flight as the engine's GPU worker and finalizer keep
// them, the datasets synthesized before the timer: ms/partition is the
// wall time per partition (the CPU twin of the CUDA backend's
// BenchmarkSteadyState; scripts/peer/bench.sh reads both).
func BenchmarkSteadyState(b *testing.B) {
	const perIteration, inFlight = 4, 2
	for _, lg := range benchenv.LogSizes(b, "12,14,16,18") {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			benchenv.LogRevision(b)
			p := benchenv.Params(b, lg)
			be, err := cpu.New(cpu.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			if err := be.Load(context.Background(), benchKey(b, p)); err != nil {
				b.Fatal(err)
			}
			var wall time.Duration
			partitions := 0
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				ds := make([]*dataset.Dataset, perIteration)
				for k := range ds {
					if ds[k], err = circuit.Synthesize(context.Background(), p, uint64(i*perIteration+k), 0, k); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				t := time.Now()
				jobs := make(chan prover.Job, inFlight)
				errc := make(chan error, 1)
				go func() {
					defer close(jobs)
					for _, d := range ds {
						job, err := be.Start(context.Background(), 0, d)
						if err != nil {
							errc <- err
							return
						}
						jobs <- job
					}
				}()
				for job := range jobs {
					if _, err := job.Wait(); err != nil {
						b.Fatal(err)
					}
				}
				select {
				case err := <-errc:
					b.Fatal(err)
				default:
				}
				wall += time.Since(t)
				partitions += perIteration
				b.StopTimer()
				for _, d := range ds {
					d.Free()
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(wall)/float64(time.Millisecond)/float64(partitions), "ms/partition")
		})
	}
}
