package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewRejectsBadConfiguration(t *testing.T) {
	okW := tinyWorkload(2, 2, 1)
	okC := Config{Strategy: Hold, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1}
	for _, tc := range []struct {
		name  string
		w     func(*Workload)
		c     func(*Config)
		field string
		says  string
	}{
		{"constraints", func(w *Workload) { w.Constraints = 1000 }, nil, "workload.constraints", "power of two"},
		{"rounds", func(w *Workload) { w.SynthesisRounds = -1 }, nil, "workload.synthesis_rounds", "rounds"},
		{"partitions", func(w *Workload) { w.Partitions = 0 }, nil, "workload.partitions", ">= 1"},
		{"proofs", func(w *Workload) { w.Proofs = -3 }, nil, "workload.proofs", ">= 1"},
		{"concurrency", func(w *Workload) { w.Concurrency = 0 }, nil, "workload.concurrency", ">= 1"},
		{"strategy", nil, func(c *Config) { c.Strategy = "fifo" }, "pipeline.strategy", `"fifo" is not one of release, hold, budget, pacer`},
		{"pw hold", nil, func(c *Config) { c.PartitionWorkers = 0 }, "pipeline.partition_workers", "0 is too few: the hold strategy needs at least 1 partition permit"},
		{"pw release", nil, func(c *Config) { c.Strategy, c.PartitionWorkers = Release, 0 }, "pipeline.partition_workers", "the release strategy needs at least 1"},
		{"channel", nil, func(c *Config) { c.ChannelCapacity = 0 }, "pipeline.channel_capacity", ">= 1"},
		{"gpu workers", nil, func(c *Config) { c.GPUWorkers = 0 }, "pipeline.gpu_workers", ">= 1"},
		{"synthesis workers", nil, func(c *Config) { c.SynthesisWorkers = -1 }, "pipeline.synthesis_workers", ">= 0"},
		{"budget too small", nil, func(c *Config) { c.Strategy, c.Budget = Budget, datasetBytes()-1 }, "pipeline.budget", "cannot hold one partition's dataset"},
		{"budget negative", nil, func(c *Config) { c.Budget = -1 }, "pipeline.budget", ">= 0"},
		{"pacer target", nil, func(c *Config) { c.Strategy, c.Pacer.TargetDepth = Pacer, -1 }, "pipeline.pacer.target_depth", "> 0"},
		{"pacer kp", nil, func(c *Config) { c.Strategy, c.Pacer.Kp = Pacer, -0.5 }, "pipeline.pacer.kp", ">= 0"},
		{"pacer interval", nil, func(c *Config) { c.Strategy, c.Pacer.Interval = Pacer, time.Microsecond }, "pipeline.pacer.interval", ">= 1ms"},
		{"pacer max in flight", nil, func(c *Config) { c.Strategy, c.Pacer.TargetDepth, c.Pacer.MaxInFlight = Pacer, 4, 3 }, "pipeline.pacer.max_in_flight", "must exceed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, c := okW, okC
			if tc.w != nil {
				tc.w(&w)
			}
			if tc.c != nil {
				tc.c(&c)
			}
			_, err := New(Options{Backend: &fakeBackend{}, Workload: w, Config: c})
			if err == nil {
				t.Fatal("accepted")
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("error %q: want a FieldError for %s", err, tc.field)
			}
			if !strings.HasPrefix(err.Error(), tc.field+": ") || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q: want %q naming %s", err, tc.says, tc.field)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	_, err := New(Options{Backend: &fakeBackend{}, Workload: Workload{Constraints: 3}, Config: Config{Strategy: Hold}})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, f := range []string{"workload.constraints", "workload.partitions", "workload.proofs", "workload.concurrency",
		"pipeline.partition_workers", "pipeline.channel_capacity", "pipeline.gpu_workers"} {
		if !strings.Contains(err.Error(), f+": ") {
			t.Errorf("error does not mention %s:\n%v", f, err)
		}
	}
}

func TestNewNeedsABackend(t *testing.T) {
	if _, err := New(Options{Workload: tinyWorkload(1, 1, 1)}); err == nil {
		t.Error("accepted no backend")
	}
	if _, err := New(Options{Backend: &zeroDevices{}, Workload: tinyWorkload(1, 1, 1),
		Config: Config{Strategy: Hold, PartitionWorkers: 1, ChannelCapacity: 1, GPUWorkers: 1}}); err == nil {
		t.Error("accepted a backend without devices")
	}
}

type zeroDevices struct{ fakeBackend }

func (*zeroDevices) Devices() int { return 0 }
