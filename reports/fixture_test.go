package reports

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

// fixtureShape is one synthetic configuration: a strategy and the figures
// a small CPU run of it plausibly shows.
type fixtureShape struct {
	name     string
	strategy string
	pw       int
	pps      float64 // partitions/s
	baseRSS  float64 // bytes: process and key
	perPart  float64 // bytes held per partition in flight
	inFlight int     // partitions holding datasets at the peak
	repeats  int
	// failRep, when >= 0, is a repetition that hit the memory limit.
	failRep int
}

var fixtureShapes = []fixtureShape{
	{name: "release pw=2", strategy: "release", pw: 2, pps: 9.0, baseRSS: 180 << 20, perPart: 2 << 20, inFlight: 5, repeats: 4, failRep: -1},
	{name: "release pw=4", strategy: "release", pw: 4, pps: 10.5, baseRSS: 180 << 20, perPart: 2 << 20, inFlight: 11, repeats: 4, failRep: 2},
	{name: "hold | pw=2 <c=2>", strategy: "hold", pw: 2, pps: 8.2, baseRSS: 180 << 20, perPart: 2 << 20, inFlight: 3, repeats: 4, failRep: -1},
	{name: "hold pw=4", strategy: "hold", pw: 4, pps: 10.1, baseRSS: 180 << 20, perPart: 2 << 20, inFlight: 5, repeats: 4, failRep: -1},
	{name: "budget 12MiB", strategy: "budget", pw: 0, pps: 10.0, baseRSS: 180 << 20, perPart: 2 << 20, inFlight: 6, repeats: 3, failRep: -1},
	{name: "pacer depth=2", strategy: "pacer", pw: 0, pps: 10.3, baseRSS: 180 << 20, perPart: 2 << 20, inFlight: 4, repeats: 3, failRep: -1},
}

// fixtureRun builds a plausible results document: warm-ups, repeats with
// noise, a series per repetition whose counters rise and return to zero,
// one memory-limit repetition; GPU figures only when nvml is true.
func fixtureRun(t *testing.T, nvml bool, shapes []fixtureShape) *results.Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(42, 7))
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	run := &results.Run{
		Schema: results.SchemaVersion, Tool: "provebench", ToolVersion: "v0.1.0-test",
		StartedAt: start, FinishedAt: start.Add(20 * time.Minute), Complete: true,
		Environment: results.Environment{
			Hostname: "ci-runner", OS: "linux", Arch: "amd64", Kernel: "6.8.0", CPUModel: "AMD EPYC 7B13",
			CPUs: 2, GOMAXPROCS: 2, MemoryBytes: 24 << 30, GoVersion: "go1.26.8", GitCommit: "0123abcd", NVML: nvml,
		},
	}
	if nvml {
		run.Environment.DriverVersion = "560.35"
		run.Environment.GPUs = []results.GPU{{Index: 0, Name: "NVIDIA H200", MemoryBytes: 141 << 30}}
	}
	const partitions = 20
	for _, sh := range shapes {
		spec, err := json.Marshal(map[string]any{
			"name":     sh.name,
			"workload": map[string]any{"constraints": 16384, "partitions": 10, "proofs": 2, "concurrency": 1},
			"pipeline": map[string]any{"strategy": sh.strategy, "partition_workers": sh.pw, "channel_capacity": 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		sc := results.Scenario{
			Name: sh.name, Source: "scenarios/ci.yaml:12", Labels: map[string]string{"pipeline.strategy": sh.strategy},
			Strategy: sh.strategy, Backend: "cpu", KeyKind: "setup", Verifiable: true,
			Constraints: 16384, Partitions: 10, Proofs: 2, Spec: spec,
		}
		for i := -1; i < sh.repeats; i++ { // i == -1: the warm-up
			pps := sh.pps * (1 + 0.03*rng.NormFloat64())
			wall := partitions / pps
			peak := sh.baseRSS + float64(sh.inFlight)*sh.perPart*(1+0.05*rng.Float64())
			r := results.Repetition{
				Index: i + 1, Warmup: i < 0, Status: results.StatusOK, StartedAt: start.Add(time.Duration(i+1) * time.Minute),
				WallSeconds: wall, ProcessSeconds: wall + 2, Partitions: partitions, Proofs: 2,
				PartitionsPerSecond: pps, SecondsPerProof: wall / 2, Verifiable: true, ProofsVerified: 2,
				PeakRSSBytes: uint64(peak), PeakRSSSampledBytes: uint64(peak * 0.98),
				PeakRSSSource:      results.PeakFromVmHWM,
				DeviceBusyFraction: ptr(0.6 + 0.3*rng.Float64()), SteadyDeviceBusyFraction: ptr(0.9 + 0.05*rng.Float64()),
				CPUUserSeconds: wall * 1.8, CPUSystemSeconds: wall * 0.1,
				PeakCounters: map[string]int64{
					"abc_bytes": int64(sh.inFlight) * (3 << 19), "wire_bytes": int64(sh.inFlight) * (1 << 19),
					"synthesizing": int64(max(sh.pw, 2)), "in_channel": 1, "on_gpu": 1, "waiting_send": int64(max(sh.inFlight-sh.pw-2, 0)),
				},
				FinalCounters: map[string]int64{"abc_bytes": 0, "wire_bytes": 0, "synthesizing": 0, "in_channel": 0, "on_gpu": 0, "waiting_send": 0},
				Stages: map[string]results.StageSummary{
					"synthesis":  {Count: partitions, MeanSeconds: 0.18, P50Seconds: 0.17, P90Seconds: 0.25, MaxSeconds: 0.3, TotalSeconds: 3.6},
					"queue_wait": {Count: partitions, MeanSeconds: 0.05, P50Seconds: 0.04, P90Seconds: 0.1, MaxSeconds: 0.2, TotalSeconds: 1},
					"gpu_start":  {Count: partitions, MeanSeconds: 0.07, P50Seconds: 0.07, P90Seconds: 0.08, MaxSeconds: 0.1, TotalSeconds: 1.4},
					"msm_g1":     {Count: partitions, MeanSeconds: 0.03, P50Seconds: 0.03, P90Seconds: 0.04, MaxSeconds: 0.05, TotalSeconds: 0.6},
				},
				Series: fixtureSeries(rng, wall, sh, nvml),
			}
			if nvml {
				g, d, u := uint64(peak/3), uint64(peak/3)+(1<<30), 0.70
				r.PeakGPUMemoryBytes, r.PeakGPUDeviceMemoryBytes, r.MeanGPUUtilization = &g, &d, &u
			}
			if i == sh.failRep {
				r.Status, r.Error = results.StatusMemoryLimit, fmt.Sprintf("RSS %d MiB passed the limit of 200 MiB", int(peak)>>20)
				r.Proofs, r.ProofsVerified, r.PartitionsPerSecond, r.SecondsPerProof = 0, 0, 0, 0
				r.FinalCounters = nil
			}
			sc.Repetitions = append(sc.Repetitions, r)
		}
		run.Scenarios = append(run.Scenarios, sc)
	}
	// Through the real encoder and decoder: the fixture is a valid document.
	path := filepath.Join(t.TempDir(), "results.json")
	if err := results.Write(path, run); err != nil {
		t.Fatal(err)
	}
	back, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// fixtureSeries samples a repetition every 100 ms from the key load (t < 0)
// to the end: partitions enter synthesis, wait, run on the device and are
// freed; RSS follows the live dataset bytes.
func fixtureSeries(rng *rand.Rand, wall float64, sh fixtureShape, nvml bool) *results.Series {
	const dt = 0.1
	s := &results.Series{IntervalSeconds: dt, Counters: map[string][]int64{}}
	names := []string{"synthesizing", "waiting_send", "in_channel", "on_gpu", "abc_bytes", "wire_bytes"}
	for t := -1.0; t <= wall+dt/2; t += dt {
		phase := 0.0
		if t > 0 && t < wall {
			phase = math.Sin(math.Pi * t / wall)
		}
		inFlight := int64(math.Round(float64(sh.inFlight) * phase * (0.8 + 0.2*rng.Float64())))
		synth := min(inFlight, int64(max(sh.pw, 2)))
		onGPU := min(inFlight-synth, 1)
		inChan := min(inFlight-synth-onGPU, 1)
		waiting := inFlight - synth - onGPU - inChan
		vals := map[string]int64{
			"synthesizing": synth, "waiting_send": waiting, "in_channel": inChan, "on_gpu": onGPU,
			"abc_bytes": inFlight * (3 << 19), "wire_bytes": inFlight * (1 << 19),
		}
		for _, n := range names {
			s.Counters[n] = append(s.Counters[n], vals[n])
		}
		rss := sh.baseRSS*math.Min(1, (t+1.2)) + float64(inFlight)*sh.perPart
		s.T = append(s.T, t)
		s.RSSBytes = append(s.RSSBytes, uint64(rss))
		if nvml {
			proc, dev, util := uint64(rss/3), uint64(rss/3)+(1<<30), 0.7*phase
			s.GPUMemoryBytes = append(s.GPUMemoryBytes, &proc)
			s.GPUDeviceMemoryBytes = append(s.GPUDeviceMemoryBytes, &dev)
			s.GPUUtilization = append(s.GPUUtilization, &util)
		}
	}
	return s
}

func ptr[T any](v T) *T { return &v }
