package results_test

import (
	"bytes"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/provebench/provebench/results"
)

// In a merge of shards from two hosts, each configuration's benchmark lines
// carry its own host's cpu and gpu, so benchstat keeps them apart.
func TestBenchfmtPerShardHost(t *testing.T) {
	run := writerFixture()
	other := run.Environment
	other.CPUModel, other.GOMAXPROCS = "Other CPU", 16
	other.GPUs = []results.GPU{{Name: "NVIDIA H200"}}
	run.Shards = []results.ShardRun{{Index: 1, Count: 2, Environment: run.Environment}, {Index: 2, Count: 2, Environment: other}}
	run.Scenarios[0].Shard, run.Scenarios[1].Shard = 1, 2
	if env := run.ScenarioEnvironment(1); env.CPUModel != "Other CPU" {
		t.Fatalf("scenario 1 ran on %q", env.CPUModel)
	}

	var buf bytes.Buffer
	if err := results.WriteBenchfmt(&buf, run); err != nil {
		t.Fatal(err)
	}
	rd := benchfmt.NewReader(&buf, "results.bench")
	cpus := map[string]string{}
	for rd.Scan() {
		if r, ok := rd.Result().(*benchfmt.Result); ok {
			cpus[r.Name.String()] = r.GetConfig("cpu") + " | " + r.GetConfig("gpu")
		}
	}
	want := map[string]string{"Provebench/hold_pw:2-2": "Test CPU @ 3.0GHz | ", "Provebench/budget_16GiB-16": "Other CPU | NVIDIA H200"}
	for name, w := range want {
		if cpus[name] != w {
			t.Errorf("%s: cpu | gpu %q, want %q (all: %v)", name, cpus[name], w, cpus)
		}
	}
}
