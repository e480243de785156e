package results_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

func ptr[T any](v T) *T { return &v }

// writerFixture is a small run: two scenarios with different labels, a
// warm-up, a failed repetition, GPU figures on one scenario only.
func writerFixture() *results.Run {
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	rep := func(i int, status results.Status, pps float64) results.Repetition {
		return results.Repetition{
			Index: i, Status: status, StartedAt: start.Add(time.Duration(i) * time.Minute),
			WallSeconds: 10, ProcessSeconds: 11, Partitions: 20, Proofs: 2,
			PartitionsPerSecond: pps, SecondsPerProof: 20 / pps / 2,
			Verifiable: true, ProofsVerified: 2,
			PeakRSSBytes: 3 << 30, PeakRSSSource: results.PeakFromVmHWM, PeakRSSSampledBytes: 3<<30 - 4096,
			DeviceBusyFraction: ptr(0.75), SteadyDeviceBusyFraction: ptr(0.9), CPUUserSeconds: 17.5, CPUSystemSeconds: 0.25,
			PeakCounters:  map[string]int64{"abc_bytes": 1 << 20, "in_channel": 2},
			FinalCounters: map[string]int64{"abc_bytes": 0, "in_channel": 0},
			Stages: map[string]results.StageSummary{
				"synthesis": {Count: 20, TotalSeconds: 8, MeanSeconds: 0.4, P50Seconds: 0.4, P90Seconds: 0.5, MaxSeconds: 0.6},
			},
		}
	}
	hold := results.Scenario{
		Name: "hold pw=2", Labels: map[string]string{"pipeline.partition_workers": "2"},
		Strategy: "hold", Backend: "cpu", KeyKind: "random", Constraints: 1024, Partitions: 10, Proofs: 2,
	}
	warm := rep(0, results.StatusOK, 2)
	warm.Warmup = true
	failed := rep(3, results.StatusFailed, 0)
	failed.Error = "synthesis: out of memory, \"quoted\""
	failed.PeakCounters, failed.FinalCounters, failed.Stages = nil, nil, nil
	hold.Repetitions = []results.Repetition{warm, rep(1, results.StatusOK, 2), rep(2, results.StatusOK, 2.1), failed}

	budget := results.Scenario{
		Name: "budget/16GiB", Labels: map[string]string{"pipeline.budget_bytes": "16GiB"},
		Strategy: "budget", Backend: "cpu", KeyKind: "random", Constraints: 1024, Partitions: 10, Proofs: 2,
	}
	g := rep(0, results.StatusOK, 3)
	g.PeakGPUMemoryBytes = ptr(uint64(5 << 30))
	g.PeakGPUDeviceMemoryBytes = ptr(uint64(6 << 30))
	g.MeanGPUUtilization = ptr(55.5)
	g.PeakCounters["budget_reserved_bytes"] = 14 << 20
	g.Stages["ntt"] = results.StageSummary{Count: 20, TotalSeconds: 1, MeanSeconds: 0.05, P50Seconds: 0.05, P90Seconds: 0.06, MaxSeconds: 0.07}
	budget.Repetitions = []results.Repetition{g}

	return &results.Run{
		Schema: results.SchemaVersion, Tool: "provebench", ToolVersion: "test", StartedAt: start, Complete: true,
		Environment: results.Environment{
			Hostname: "host-1", OS: "linux", Arch: "amd64", CPUModel: "Test CPU @ 3.0GHz", CPUs: 2, GOMAXPROCS: 2,
			MemoryBytes: 24 << 30, GoVersion: "go1.26.8",
		},
		Scenarios: []results.Scenario{hold, budget},
	}
}

func TestWriteCSV(t *testing.T) {
	run := writerFixture()
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, run); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse back: %v", err)
	}
	if got, want := len(rows), 1+4+1; got != want {
		t.Fatalf("%d rows, want %d (header + one per repetition)", got, want)
	}
	header := rows[0]
	col := func(name string) int {
		t.Helper()
		i := slices.Index(header, name)
		if i < 0 {
			t.Fatalf("no column %q in header %v", name, header)
		}
		return i
	}

	// Fixed columns first, then labels, then counters and stages, each group sorted.
	wantOrder := []string{
		"scenario", "strategy", "backend", "key_kind", "constraints", "partitions_per_proof", "workload_proofs",
		"label.pipeline.budget_bytes", "label.pipeline.partition_workers",
		"repetition", "warmup", "status", "error",
	}
	if !slices.Equal(header[:len(wantOrder)], wantOrder) {
		t.Errorf("header starts %v, want %v", header[:len(wantOrder)], wantOrder)
	}
	if a, b, c := col("peak.abc_bytes"), col("peak.budget_reserved_bytes"), col("peak.in_channel"); !(a < b && b < c && col("cpu_system_seconds") < a) {
		t.Errorf("counter columns out of order: %v", header)
	}
	if col("final.in_channel") > col("stage.ntt.count") || col("stage.ntt.max_seconds") > col("stage.synthesis.count") {
		t.Errorf("stage columns out of order: %v", header)
	}
	for _, r := range rows {
		if len(r) != len(header) {
			t.Fatalf("row has %d cells, header %d", len(r), len(header))
		}
	}

	hold1, failed, budget := rows[2], rows[4], rows[5]
	if hold1[col("scenario")] != "hold pw=2" || hold1[col("label.pipeline.partition_workers")] != "2" || hold1[col("label.pipeline.budget_bytes")] != "" {
		t.Errorf("labels wrong: %v", hold1)
	}
	if rows[1][col("warmup")] != "true" || hold1[col("warmup")] != "false" {
		t.Errorf("warm-up column wrong")
	}
	if hold1[col("peak_gpu_memory_bytes")] != "" || hold1[col("mean_gpu_utilization")] != "" {
		t.Errorf("absent GPU figures must be empty cells, got %q %q", hold1[col("peak_gpu_memory_bytes")], hold1[col("mean_gpu_utilization")])
	}
	if budget[col("peak_gpu_memory_bytes")] != "5368709120" || budget[col("mean_gpu_utilization")] != "55.5" {
		t.Errorf("GPU figures wrong: %v", budget)
	}
	if failed[col("status")] != "failed" || failed[col("error")] != `synthesis: out of memory, "quoted"` || failed[col("peak.abc_bytes")] != "" {
		t.Errorf("failed repetition row wrong: %v", failed)
	}
	if hold1[col("partitions_per_second")] != "2" || hold1[col("seconds_per_proof")] != "5" || hold1[col("peak_rss_bytes")] != "3221225472" {
		t.Errorf("figures wrong: %v", hold1)
	}
	if hold1[col("peak_rss_source")] != "vmhwm" || hold1[col("steady_device_busy_fraction")] != "0.9" {
		t.Errorf("peak RSS source / steady busy wrong: %v", hold1)
	}
	if hold1[col("stage.synthesis.p90_seconds")] != "0.5" || hold1[col("stage.ntt.count")] != "" {
		t.Errorf("stage figures wrong: %v", hold1)
	}
	if hold1[col("started_at")] != "2025-03-01T12:01:00Z" {
		t.Errorf("started_at = %q", hold1[col("started_at")])
	}

	// Stable: the same run writes the same bytes.
	var again bytes.Buffer
	if err := results.WriteCSV(&again, run); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two writes of the same run differ")
	}
}

func TestWriteCSVFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	if err := results.WriteCSVFile(path, writerFixture()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "scenario,strategy,") {
		t.Errorf("file starts %q", data[:min(len(data), 40)])
	}
	if err := results.WriteCSVFile(filepath.Join(t.TempDir(), "missing", "results.csv"), writerFixture()); err == nil {
		t.Error("writing into a missing directory did not fail")
	}
}
