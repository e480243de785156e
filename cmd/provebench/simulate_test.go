package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/provebench/provebench/results"
)

func TestPreflightRefusesPoRepSize(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	t.Setenv("PROVEBENCH_CACHE", keys)
	out := filepath.Join(dir, "never")
	if code := runCLI(t, "run", "../../scenarios/cuzk-phase12.yaml", "--backend", "cpu", "-o", out); code != exitUsage {
		t.Fatalf("run of a PoRep-sized scenario exited %d, want %d", code, exitUsage)
	}
	for _, p := range []string{out, keys} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("the refused run wrote %s", p)
		}
	}
}

func TestSimulateFromCalibrationAndWrittenCosts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	cal := filepath.Join(dir, "cal")
	if code := runCLI(t, "run", scen, "-o", cal, "--no-report"); code != exitOK {
		t.Fatalf("run exited %d", code)
	}
	calDoc := filepath.Join(cal, "results.json.gz")
	sim := filepath.Join(dir, "sim")
	if code := runCLI(t, "simulate", scen, "--calibration", calDoc, "--explain", "-o", sim); code != exitOK {
		t.Fatalf("simulate exited %d", code)
	}
	doc, err := results.Read(filepath.Join(sim, "results.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Simulated == nil || len(doc.Simulated.Calibration) != 1 || doc.Simulated.Calibration[0] != calDoc {
		t.Fatalf("simulated document does not name its calibration: %+v", doc.Simulated)
	}
	if len(doc.Scenarios) != 2 {
		t.Fatalf("%d simulated configurations, want release and hold", len(doc.Scenarios))
	}
	for _, sc := range doc.Scenarios {
		r := sc.Repetitions[0]
		if r.Status != results.StatusOK || !(r.SecondsPerProof > 0) || r.PeakRSSBytes == 0 || r.Series == nil {
			t.Errorf("%s: %+v", sc.Name, r)
		}
	}
	if _, err := os.Stat(filepath.Join(sim, "report.md")); err != nil {
		t.Errorf("no report: %v", err)
	}
	if code := runCLI(t, "compare", calDoc, filepath.Join(sim, "results.json.gz")); code != exitOK && code != exitRegression {
		t.Errorf("compare of a simulated document exited %d", code)
	}

	// Costs written in the scenario, no calibration: the cuzk figures.
	cuzk := filepath.Join(dir, "cuzk")
	if code := runCLI(t, "simulate", "../../scenarios/cuzk-phase12.yaml", "--no-report", "-o", cuzk); code != exitOK {
		t.Fatalf("simulate cuzk exited %d", code)
	}
	if code := runCLI(t, "simulate", "../../scenarios/cuzk-phase12.yaml", "--search", "--memory-cap", "480GiB"); code != exitOK {
		t.Fatalf("simulate --search exited %d", code)
	}
	if code := runCLI(t, "simulate", scen, "-o", filepath.Join(dir, "never")); code != exitUsage {
		t.Errorf("simulate without costs or calibration exited %d, want %d", code, exitUsage)
	}
}
