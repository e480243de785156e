package run

import (
	"context"
	"testing"

	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
)

// A repetition's clock starts when the prover is ready: setup is timed
// apart, by stage; a warm start proves a warm-up partition first, a cold
// one does not; device time per partition is the sum of the device stages,
// on both backends.
func TestWarmAndColdStart(t *testing.T) {
	warm := smallSpec("warm", config.Hold)
	warm.Warmups, warm.Repeats = 0, 1
	cold := warm
	cold.Name, cold.Measure = "cold", MeasureCold
	cached := warm
	cached.Name, cached.Workload.Synthesis = "cached", config.SynthesisCached
	r := newTestRunner(t)
	doc, err := r.Run(context.Background(), []Spec{warm, cold, cached})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		measure    string
		stages     []string
		notStages  []string
		verifiable bool
	}{
		{results.MeasureWarm, []string{results.SetupKeyRead, results.SetupBackendOpen, results.SetupKeyToDevice, results.SetupWarmPartition}, []string{results.SetupWitnessCache}, true},
		{results.MeasureCold, []string{results.SetupKeyRead, results.SetupBackendOpen, results.SetupKeyToDevice}, []string{results.SetupWarmPartition, results.SetupWitnessCache}, true},
		{results.MeasureWarm, []string{results.SetupWitnessCache, results.SetupWarmPartition}, nil, true},
	} {
		sc := doc.Scenarios[i]
		rep := sc.Repetitions[0]
		if rep.Status != results.StatusOK {
			t.Fatalf("%s: %s %s", sc.Name, rep.Status, rep.Error)
		}
		if rep.Measure != want.measure || rep.SetupSeconds == nil || !(*rep.SetupSeconds > 0) {
			t.Errorf("%s: measure %q setup %v", sc.Name, rep.Measure, rep.SetupSeconds)
		}
		var sum float64
		for _, name := range want.stages {
			if _, ok := rep.SetupStages[name]; !ok {
				t.Errorf("%s: no setup stage %s in %v", sc.Name, name, rep.SetupStages)
			}
		}
		for _, name := range want.notStages {
			if _, ok := rep.SetupStages[name]; ok {
				t.Errorf("%s: setup stage %s should not run", sc.Name, name)
			}
		}
		for _, v := range rep.SetupStages {
			sum += v
		}
		if !(sum <= *rep.SetupSeconds*1.001) {
			t.Errorf("%s: stages sum to %.3fs, more than the setup's %.3fs", sc.Name, sum, *rep.SetupSeconds)
		}
		if rep.DeviceSecondsPerPartition == nil || !(*rep.DeviceSecondsPerPartition > 0) {
			t.Fatalf("%s: device seconds per partition %v", sc.Name, rep.DeviceSecondsPerPartition)
		}
		var stages float64
		for _, v := range rep.DeviceStageSeconds {
			stages += v
		}
		if d := stages - *rep.DeviceSecondsPerPartition; !(d <= 1e-9 && d >= -1e-9) || !(rep.DeviceStageSeconds["ntt"] > 0) {
			t.Errorf("%s: device stages %v do not add up to %v", sc.Name, rep.DeviceStageSeconds, *rep.DeviceSecondsPerPartition)
		}
		if rep.FirstStartSeconds == nil || rep.ProofsVerified != 2 {
			t.Errorf("%s: first start %v, %d proofs verified", sc.Name, rep.FirstStartSeconds, rep.ProofsVerified)
		}
		// No GPU here: energy and the pinned pool are absent, not zero.
		if rep.EnergyJoules != nil || rep.JoulesPerProof != nil || rep.UnpooledBuffers != nil {
			t.Errorf("%s: energy %v, unpooled %v without a GPU", sc.Name, rep.EnergyJoules, rep.UnpooledBuffers)
		}
		if _, ok := rep.Series.Counters[seriesPinnedPool]; ok {
			t.Errorf("%s: a pinned-pool series on the CPU backend", sc.Name)
		}
	}
}

// The reserve is the strategy's bound on live datasets, but never more
// than the working set of a pipeline where nothing piles up.
func TestReservedDatasets(t *testing.T) {
	for _, c := range []struct {
		strategy config.Strategy
		pw, ch   int
		want     int64
	}{
		{config.Release, 2, 1, 2 + 1 + 2}, // bounded by the working set: 6 partitions in flight
		{config.Hold, 2, 1, 2 + 1 + 2},
		{config.Release, 8, 4, 6}, // every partition of the 2 proofs in flight
	} {
		s := smallSpec("x", c.strategy)
		s.Pipeline.PartitionWorkers, s.Pipeline.ChannelCapacity = c.pw, c.ch
		if got := reservedDatasets(&s); got != c.want {
			t.Errorf("%s pw=%d C=%d: %d, want %d", c.strategy, c.pw, c.ch, got, c.want)
		}
	}
}
