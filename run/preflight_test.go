package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/pipeline/config"
)

func TestEstimateTakesTheTightestGate(t *testing.T) {
	p := circuit.Params{Constraints: 1 << 20}
	abc, wires := p.DatasetBytes()
	one := abc + wires
	base := Spec{Name: "x", Workload: config.Workload{Constraints: p.Constraints, Partitions: 10, Proofs: 4, Concurrency: 2},
		Devices: 1}
	for _, tc := range []struct {
		cfg  config.Config
		want int64
	}{
		{config.Config{Strategy: config.Release, PartitionWorkers: 4, ChannelCapacity: 1, GPUWorkers: 1}, 20},
		{config.Config{Strategy: config.Hold, PartitionWorkers: 4, ChannelCapacity: 2, GPUWorkers: 1}, 4 + 2 + 2},
		{config.Config{Strategy: "hold+budget", PartitionWorkers: 8, ChannelCapacity: 8, GPUWorkers: 1, Budget: 3 * one}, 3},
	} {
		s := base
		s.Pipeline = tc.cfg
		e := EstimateSpec(&s)
		if e.Datasets != tc.want {
			t.Errorf("%s: %d datasets (%s), want %d", tc.cfg.Strategy, e.Datasets, e.Bound, tc.want)
		}
		if e.PeakRSS != runtimeBytes+e.KeyBytes+e.Datasets*one {
			t.Errorf("%s: peak %d does not add up", tc.cfg.Strategy, e.PeakRSS)
		}
	}
}

func TestPreflightRefusesOverTheLimits(t *testing.T) {
	s := Spec{Name: "big", Source: "f.yaml:3", Workload: config.Workload{Constraints: 1 << 22, Partitions: 4, Proofs: 1, Concurrency: 1},
		Pipeline: config.Config{Strategy: config.Release, PartitionWorkers: 4, ChannelCapacity: 1, GPUWorkers: 1}}
	dir := t.TempDir()
	if _, err := Preflight([]Spec{s}, 1<<40, dir, nil); err != nil {
		t.Fatalf("a 2^22 configuration on a 1 TiB host: %v", err)
	}
	_, err := Preflight([]Spec{s}, 1<<30, dir, nil)
	if err == nil || !strings.Contains(err.Error(), "host's memory 1.00 GiB  f.yaml:3") || !strings.Contains(err.Error(), "estimated from: the strategy's bound") {
		t.Fatalf("over the host's memory: %v", err)
	}
	// Issue 41: the refusal is a short table, a row per configuration
	// starting with its name (it was a 330-character sentence each).
	var refused *RefusedError
	if !errors.As(err, &refused) || len(refused.Refused) != 1 {
		t.Fatalf("the refusal is no RefusedError of one row: %v", err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "configuration") || !strings.HasPrefix(lines[2], "big ") {
		t.Errorf("the refusal is not a heading, a table and the basis:\n%v", err)
	}
	for _, l := range lines {
		if len(l) > 160 {
			t.Errorf("a line of %d characters: %q", len(l), l)
		}
	}
	s.MemoryLimit = 512 << 20
	if _, err := Preflight([]Spec{s}, 1<<40, dir, nil); err == nil || !strings.Contains(err.Error(), "memory_limit") {
		t.Fatalf("over memory_limit: %v", err)
	}
}

func TestPreflightTakesAPrediction(t *testing.T) {
	s := Spec{Name: "p", Source: "f.yaml:1", Workload: config.Workload{Constraints: 1 << 10, Partitions: 2, Proofs: 1, Concurrency: 1},
		Pipeline: config.Config{Strategy: config.Hold, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1}}
	big := func(*Spec) (int64, string, error) { return 2 << 30, "simulated", nil }
	_, err := Preflight([]Spec{s}, 1<<30, t.TempDir(), big)
	if err == nil || !strings.Contains(err.Error(), "2.00 GiB  host's memory 1.00 GiB") || !strings.Contains(err.Error(), "estimated from: simulated") {
		t.Fatalf("a predicted 2 GiB on a 1 GiB host: %v", err)
	}
}

func TestPreflightHoldsAPredictionToTheFloor(t *testing.T) {
	s := Spec{Name: "porep", Source: "f.yaml:1", Workload: config.Workload{Constraints: 1 << 27, Partitions: 10, Proofs: 1, Concurrency: 1},
		Pipeline: config.Config{Strategy: config.Hold, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1}}
	e := EstimateSpec(&s)
	floor := e.KeyBytes + e.Dataset
	small := func(*Spec) (int64, string, error) { return 1 << 30, "a model of 2^10..2^12", nil }
	checks, err := Preflight([]Spec{s}, floor-1, t.TempDir(), small)
	if err == nil || !strings.Contains(err.Error(), "a model of 2^10..2^12 predicted only 1.00 GiB") || !strings.Contains(err.Error(), "host's memory") {
		t.Fatalf("a prediction below the key's size on a host smaller than the key: %v", err)
	}
	if len(checks) != 1 || checks[0].PeakRSS != floor {
		t.Fatalf("checks %+v, want the floor %d", checks, floor)
	}
	// Above the floor, below the bound: the prediction is the figure. The
	// key is in the cache, so that the check of the disk's free space (a
	// 2^27 key needs 72 GiB) does not depend on the disk the test runs on.
	fits := func(*Spec) (int64, string, error) { return floor + 1, "the model", nil }
	checks, err = Preflight([]Spec{s}, floor+1, cachedKey(t, &s), fits)
	if err != nil || checks[0].PeakRSS != floor+1 || checks[0].Basis != "the model" {
		t.Fatalf("a prediction between floor and bound: %+v, %v", checks, err)
	}
	if e.PeakRSS <= floor+1 {
		t.Fatalf("the bound %d is not above the prediction: the test shows nothing", e.PeakRSS)
	}
}

func TestPreflightFallsBackToTheBound(t *testing.T) {
	s := Spec{Name: "p", Source: "f.yaml:1", Workload: config.Workload{Constraints: 1 << 10, Partitions: 2, Proofs: 1, Concurrency: 1},
		Pipeline: config.Config{Strategy: config.Hold, PartitionWorkers: 2, ChannelCapacity: 1, GPUWorkers: 1}}
	none := func(*Spec) (int64, string, error) { return 0, "", fmt.Errorf("%w: no cached run", ErrNoPrediction) }
	checks, err := Preflight([]Spec{s}, 1<<40, t.TempDir(), none)
	if err != nil || len(checks) != 1 || checks[0].PeakRSS != EstimateSpec(&s).PeakRSS || !strings.Contains(checks[0].Basis, "no cached run") {
		t.Fatalf("no prediction: %+v, %v; want the bound and the reason", checks, err)
	}
	broken := func(*Spec) (int64, string, error) { return 0, "", errors.New("bad calibration") }
	if _, err := Preflight([]Spec{s}, 1<<40, t.TempDir(), broken); err == nil || !strings.Contains(err.Error(), "bad calibration") {
		t.Fatalf("a predictor's error: %v; want a refusal", err)
	}
}

// Issue 20 item 16: an exec configuration is not held to the built-in
// pipeline's estimate (a `sleep 0.2` was refused at 64 MiB for "key 9 MiB
// + 4 datasets"): it has none, and the run is not refused.
func TestPreflightDoesNotEstimateExec(t *testing.T) {
	s := Spec{Name: "sleep", Source: "f.yaml:2", Exec: &ExecSpec{Command: []string{"sleep", "0.2"}}, MemoryLimit: 64 << 20,
		Workload: config.Workload{Constraints: 1 << 22, Partitions: 4, Proofs: 1, Concurrency: 1},
		Pipeline: config.Config{Strategy: config.Release, PartitionWorkers: 4, ChannelCapacity: 1, GPUWorkers: 1}}
	predicted := func(*Spec) (int64, string, error) { return 1 << 40, "simulated", nil }
	checks, err := Preflight([]Spec{s}, 1<<30, t.TempDir(), predicted)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if len(checks) != 1 || checks[0].PeakRSS != 0 || checks[0].Basis != NoEstimateBasis {
		t.Errorf("checks %+v, want one without an estimate", checks)
	}
}

// cachedKey returns a cache folder in which s's proving key is present (an
// empty file: Preflight only asks whether it exists), so that no key is
// counted against the free space of the disk the test runs on.
func cachedKey(t *testing.T, s *Spec) string {
	t.Helper()
	dir := t.TempDir()
	path := groth16.Cache{Dir: dir}.Path(s.Workload.Circuit(), s.Key.Resolve(s.Workload.Constraints))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPreflightRefusesAKeyTheDiskCannotHold: a key to generate larger than
// any disk (2^40 constraints, hundreds of TiB) is refused with the space it
// needs and the folder, and the same key already in the cache is not
// counted.
func TestPreflightRefusesAKeyTheDiskCannotHold(t *testing.T) {
	s := Spec{Name: "huge", Source: "f.yaml:1", Workload: config.Workload{Constraints: 1 << 40, Partitions: 1, Proofs: 1, Concurrency: 1},
		Pipeline: config.Config{Strategy: config.Hold, PartitionWorkers: 1, ChannelCapacity: 1, GPUWorkers: 1}}
	if need := EstimateSpec(&s).KeyBytes; need < 1<<48 {
		t.Fatalf("a 2^40 key estimated at %d bytes: not beyond any disk, the test shows nothing", need)
	}
	dir := t.TempDir()
	_, err := Preflight([]Spec{s}, 0, dir, nil)
	if err == nil || !strings.Contains(err.Error(), "the proving keys to generate need") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a key larger than the disk: %v", err)
	}
	if _, err := Preflight([]Spec{s}, 0, cachedKey(t, &s), nil); err != nil {
		t.Fatalf("the same key already cached: %v", err)
	}
}
