//go:build cuda

package cuda

// Benchmarks for a GPU host, run from a test binary built anywhere:
//
//	go test -c -tags cuda -o bin/cuda.test ./gpu/cuda   (make bench-cuda-bin)
//	PROVEBENCH_BENCH_LOG=20,22,24 bin/cuda.test -test.run '^$' \
//	    -test.bench 'Prove|Kernels|SteadyState' -test.benchtime 1x
//
// Sizes are log2 constraint counts from $PROVEBENCH_BENCH_LOG (default 10).
// Keys come from the key cache ($PROVEBENCH_CACHE): a real setup up to 2^16,
// a benchmark key (same shapes and cost, random points) above; generating a
// 2^24 key takes about a minute. Every benchmark proves one untimed
// partition first, so one iteration (-test.benchtime 1x) is a steady-state
// figure. BenchmarkProve and BenchmarkKernels each log a summary line per
// size; whichever runs second also logs the ratio of the two.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/dataset"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/internal/benchenv"
	"github.com/provebench/provebench/gpu/prover"
)

// benchEnv is a loaded backend and one synthesized partition, in pageable
// memory (ds) and, on CUDA, page-locked at synthesis (pinned). The backend
// does not write to a dataset, so every iteration proves the same one.
type benchEnv struct {
	b      *Backend
	pk     *groth16.ProvingKey
	ds     *dataset.Dataset
	pinned *dataset.Dataset
}

// uploadModes are the ways a dataset can reach the device: from pageable
// memory (through the driver's staging buffer), page-locked for each upload
// (Options.PinUploads), or synthesized page-locked (Options.PinDatasets).
var uploadModes = []string{"pageable", "pin-each-upload", "pinned-dataset"}

// dataset returns the dataset and upload setting of a mode, or false when
// the device cannot page-lock memory.
func (e *benchEnv) dataset(mode string) (*dataset.Dataset, bool, bool) {
	switch mode {
	case "pin-each-upload":
		return e.ds, true, e.b.drv != nil
	case "pinned-dataset":
		return e.pinned, false, e.pinned != nil
	}
	return e.ds, false, true
}

// benchPrecompute is the precompute factor of the benchmarks' backend:
// the product's, or $PROVEBENCH_MSM_PRECOMPUTE.
func benchPrecompute(b *testing.B) int {
	n, err := PrecomputeFactorFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func newBenchEnv(b *testing.B, lg int) *benchEnv {
	b.Helper()
	ctx := context.Background()
	typ, _ := testDeviceType()
	// ICICLE keeps one NTT domain per device per process: one loaded
	// backend at a time, closed before the next size.
	be, err := New(Options{DeviceType: typ, PinDatasets: typ == DeviceCUDA, PrecomputeFactor: benchPrecompute(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := be.Close(); err != nil {
			b.Errorf("close: %v", err)
		}
	})
	cache := groth16.Cache{Dir: groth16.DefaultCacheDir(), Log: b.Logf}
	pk, _, err := cache.Get(ctx, benchenv.Params(b, lg), groth16.KindAuto)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pk.Close() })
	if err := be.Load(ctx, pk); err != nil {
		b.Fatal(err)
	}
	benchenv.LogRevision(b)
	b.Logf("2^%d: bit fraction %.2f, precompute factor %d", lg, pk.Params().BitFraction(), be.devs[0].precomputeFactor())
	t := time.Now()
	ds, err := circuit.Synthesize(ctx, pk.Params(), 1, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	synth := time.Since(t)
	b.Cleanup(func() { ds.Free() })
	env := &benchEnv{b: be, pk: pk, ds: ds}
	if pin := be.HostPinner(); pin != nil {
		t := time.Now()
		env.pinned, err = circuit.SynthesizePinned(ctx, pk.Params(), 1, 0, 0, pin)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("2^%d: synthesis %s into page-locked memory, %s into pageable memory", lg, ms(time.Since(t)), ms(synth))
		b.Cleanup(func() { env.pinned.Free() })
	}
	return env
}

// prove proves the dataset the product path would: page-locked at
// synthesis where the device can (the CUDA backend's default), else
// pageable.
func (e *benchEnv) prove(b *testing.B) prover.Result {
	ds := e.ds
	if e.pinned != nil {
		ds = e.pinned
	}
	job, err := e.b.Start(context.Background(), 0, ds)
	if err != nil {
		b.Fatal(err)
	}
	res, err := job.Wait()
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// ratioLedger pairs the prove and kernel figures of a size measured in the
// same run.
var ratioLedger = struct {
	sync.Mutex
	prove, kernels map[int]time.Duration
}{prove: map[int]time.Duration{}, kernels: map[int]time.Duration{}}

func logRatio(b *testing.B, lg int) {
	ratioLedger.Lock()
	defer ratioLedger.Unlock()
	p, okP := ratioLedger.prove[lg]
	k, okK := ratioLedger.kernels[lg]
	if okP && okK && k > 0 {
		b.Logf("2^%d: prove %s / kernels %s = %.2fx (target <= 1.5x)", lg, ms(p), ms(k), float64(p)/float64(k))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func metric(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkProve is Start+Wait of one partition with the key resident; the
// dataset is synthesized outside the timer, into page-locked memory on CUDA
// (Options.PinDatasets, the default there). Besides ns/op it reports each
// stage's time (ms/op): the upload (host to device), the device queue wait,
// the NTT region, the five MSMs, the download (device to host) and the
// assembly.
func BenchmarkProve(b *testing.B) {
	for _, lg := range benchenv.LogSizes(b, "10") {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			env := newBenchEnv(b, lg)
			env.prove(b) // warm-up
			stages := map[string]time.Duration{}
			var order []string
			var wall time.Duration
			iters := 0
			for b.Loop() {
				t := time.Now()
				res := env.prove(b)
				wall += time.Since(t)
				iters++
				for _, s := range res.Stages {
					if _, ok := stages[s.Name]; !ok {
						order = append(order, s.Name)
					}
					stages[s.Name] += s.Duration
				}
			}
			var line []string
			for _, name := range order {
				d := stages[name] / time.Duration(iters)
				b.ReportMetric(metric(d), name+"-ms/op")
				line = append(line, fmt.Sprintf("%s %s", name, ms(d)))
			}
			up := stages[prover.StageUpload] / time.Duration(iters)
			abc, wires := env.pk.Params().DatasetBytes()
			if up > 0 {
				b.ReportMetric(float64(abc+wires)/up.Seconds()/1e9, "upload-GB/s")
			}
			mean := wall / time.Duration(iters)
			b.Logf("2^%d: prove %s = %s", lg, ms(mean), strings.Join(line, ", "))
			ratioLedger.Lock()
			ratioLedger.prove[lg] = mean
			ratioLedger.Unlock()
			logRatio(b, lg)
		})
	}
}

// BenchmarkKernels times ICICLE's own calls for the operations of one
// partition, each alone on the device with its data resident (device time
// from CUDA events; host time on ICICLE's CPU device): the six NTTs and the
// inverse coset NTT, the vector operations, the five MSMs. Each is reported
// in ms/op; ns/op is their sum.
func BenchmarkKernels(b *testing.B) {
	for _, lg := range benchenv.LogSizes(b, "10") {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			env := newBenchEnv(b, lg)
			d := env.b.devs[0]
			key, err := env.b.loadedKey()
			if err != nil {
				b.Fatal(err)
			}
			a, bv, c, _ := env.ds.ABC()
			wires, _ := env.ds.Wires()
			j := &job{b: env.b, d: d, key: key, ctx: context.Background(),
				part: partition{n: env.ds.N, numPublic: env.ds.NumPublic, full: env.pk.Params().BitWires()}}
			p := &j.part
			err = d.launch.do(func() error {
				if err := j.allocate(d.stream); err != nil {
					return err
				}
				_, err := j.upload(d.stream, transfer{"a", a, p.a}, transfer{"b", bv, p.b},
					transfer{"c", c, p.c}, transfer{"wires", wires, p.wires})
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			defer d.launch.do(func() error { return j.freeAll(d.stream) })

			times := map[string]time.Duration{}
			var order []string
			run := func() error {
				ks := append(quotientKernels(&j.part, &key.cosetGen, d.stream, d.vecExtHandle()),
					msmKernels(&j.part, &d.key, d.stream, d.vecExtHandle())...)
				for _, k := range ks {
					t0, err := d.clock.record(d.stream)
					if err != nil {
						return err
					}
					if err := check(k.name, k.run()); err != nil {
						return err
					}
					t1, err := d.clock.record(d.stream)
					if err != nil {
						return err
					}
					err = d.clock.wait(t1)
					if err == nil {
						var t time.Duration
						t, err = d.clock.between(t0, t1)
						if _, ok := times[k.name]; !ok {
							order = append(order, k.name)
						}
						times[k.name] += t
					}
					d.clock.release(t0, t1)
					if err != nil {
						return err
					}
				}
				return nil
			}
			if err := d.launch.do(run); err != nil { // warm-up
				b.Fatal(err)
			}
			clear(times)
			order = order[:0]
			iters := 0
			for b.Loop() {
				if err := d.launch.do(run); err != nil {
					b.Fatal(err)
				}
				iters++
			}
			var sum, ntt, msm time.Duration
			for _, name := range order {
				t := times[name] / time.Duration(iters)
				b.ReportMetric(metric(t), name+"-ms/op")
				sum += t
				if strings.HasPrefix(name, "msm_") {
					msm += t
				} else {
					ntt += t
				}
			}
			b.ReportMetric(metric(ntt), "ntt_region-ms/op")
			b.ReportMetric(metric(msm), "msms-ms/op")
			b.ReportMetric(float64(sum.Nanoseconds()), "ns/op")
			b.Logf("2^%d: kernels %s = NTT region %s + MSMs %s", lg, ms(sum), ms(ntt), ms(msm))
			ratioLedger.Lock()
			ratioLedger.kernels[lg] = sum
			ratioLedger.Unlock()
			logRatio(b, lg)
		})
	}
}

// BenchmarkSteadyState feeds one device continuously, the way a pipeline's
// GPU worker and finalizer do: a worker starts partition after partition
// (three in flight at most; the backend's default queue depth lets one of
// them upload while another runs) while a finalizer waits for them, with
// uploads from pageable memory and page-locked (Options.PinUploads; CUDA
// only). busy-% is the device's busy time (Stats.Busy) as a share of the
// span from the first partition's completion to the last one's, both on the
// device's clock (CUDA events), so the pipeline's fill is left out;
// ms/partition is the same span on the host clock, per partition. (The host
// sees a completion later than the device when a pageable upload holds the
// driver: the host span can be shorter than the device's.)
func BenchmarkSteadyState(b *testing.B) {
	const perIteration, inFlight = 8, 3
	for _, lg := range benchenv.LogSizes(b, "10") {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			env := newBenchEnv(b, lg)
			env.prove(b) // warm-up
			for _, name := range uploadModes {
				b.Run(name, func(b *testing.B) {
					benchenv.LogRevision(b) // a leaf's log is the one printed
					ds, pin, ok := env.dataset(name)
					if !ok {
						b.Skip("page-locking needs the CUDA device")
					}
					env.b.pinUploads = pin
					defer func() { env.b.pinUploads = false }()
					var busy, span, wall time.Duration
					partitions := 0
					for b.Loop() {
						jobs := make(chan prover.Job, inFlight)
						slots := make(chan struct{}, inFlight)
						errc := make(chan error, 1)
						go func() {
							defer close(jobs)
							for range perIteration {
								slots <- struct{}{}
								job, err := env.b.Start(context.Background(), 0, ds)
								if err != nil {
									errc <- err
									return
								}
								jobs <- job
							}
						}()
						var busy0, covered0 time.Duration
						var t0 time.Time
						done := 0
						for job := range jobs {
							if _, err := job.Wait(); err != nil {
								b.Fatal(err)
							}
							<-slots
							if done++; done == 1 {
								st := env.b.Stats(0)
								busy0, covered0, t0 = st.Busy, st.Span, time.Now()
							}
						}
						select {
						case err := <-errc:
							b.Fatal(err)
						default:
						}
						wall += time.Since(t0)
						st := env.b.Stats(0)
						busy += st.Busy - busy0
						span += st.Span - covered0
						partitions += perIteration - 1
					}
					share := float64(busy) / float64(span)
					per := wall / time.Duration(partitions)
					b.ReportMetric(100*share, "busy-%")
					b.ReportMetric(metric(per), "ms/partition")
					b.ReportMetric(metric(span), "device-span-ms")
					b.ReportMetric(metric(wall), "host-span-ms")
					b.Logf("2^%d %s: steady state %s per partition, device busy %.1f%% (%d partitions after the first, %d in flight; span %s on the device's clock, %s on the host's)",
						lg, name, ms(per), 100*share, partitions, inFlight, ms(span), ms(wall))
				})
			}
		})
	}
}

// BenchmarkUpload copies one partition's a, b, c and wires to the device, as
// Start does: from pageable memory, and page-locked for the copy
// (Options.PinUploads; CUDA only). wall-ms/op includes locking and unlocking
// the pages, copy-ms/op is the copies' device time.
func BenchmarkUpload(b *testing.B) {
	for _, lg := range benchenv.LogSizes(b, "10") {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			env := newBenchEnv(b, lg)
			d := env.b.devs[0]
			key, err := env.b.loadedKey()
			if err != nil {
				b.Fatal(err)
			}
			abc, wireBytes := env.pk.Params().DatasetBytes()
			for _, name := range uploadModes {
				b.Run(name, func(b *testing.B) {
					benchenv.LogRevision(b) // a leaf's log is the one printed
					ds, pin, ok := env.dataset(name)
					if !ok {
						b.Skip("page-locking needs the CUDA device")
					}
					a, bv, c, _ := ds.ABC()
					wires, _ := ds.Wires()
					j := &job{b: env.b, d: d, key: key, ctx: context.Background(), pinEach: pin,
						part: partition{n: ds.N, numPublic: ds.NumPublic, full: env.pk.Params().BitWires()}}
					p := &j.part
					if err := d.launch.do(func() error { return j.allocate(d.stream) }); err != nil {
						b.Fatal(err)
					}
					defer d.launch.do(func() error { return j.freeAll(d.stream) })
					var wall, copies time.Duration
					iters := 0
					upload := func() {
						t := time.Now()
						err := d.launch.do(func() error {
							t, err := j.upload(d.stream, transfer{"a", a, p.a}, transfer{"b", bv, p.b},
								transfer{"c", c, p.c}, transfer{"wires", wires, p.wires})
							copies += t.copies
							return err
						})
						if err != nil {
							b.Fatal(err)
						}
						wall += time.Since(t)
					}
					upload() // warm-up
					wall, copies = 0, 0
					for b.Loop() {
						upload()
						iters++
					}
					w, cp := wall/time.Duration(iters), copies/time.Duration(iters)
					b.ReportMetric(metric(w), "wall-ms/op")
					b.ReportMetric(metric(cp), "copy-ms/op")
					b.ReportMetric(float64(abc+wireBytes)/w.Seconds()/1e9, "GB/s")
					b.Logf("2^%d %s: %s for %.2f GB (copies %s): %.1f GB/s", lg, name, ms(w),
						float64(abc+wireBytes)/1e9, ms(cp), float64(abc+wireBytes)/w.Seconds()/1e9)
				})
			}
		})
	}
}
