package results_test

import (
	"bytes"
	"encoding/csv"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/provebench/provebench/results"
)

// deviceFixture is writerFixture with device time, setup and energy on the
// budget scenario's repetition only: the hold scenario's lack them (the
// exec driver, an older document) and must read as absent, not 0.
func deviceFixture() *results.Run {
	run := writerFixture()
	g := &run.Scenarios[1].Repetitions[0]
	g.DeviceSecondsPerPartition = ptr(0.355)
	g.DeviceStageSeconds = map[string]float64{"ntt_region": 0.1, "msm_h": 0.255}
	g.Measure = results.MeasureWarm
	g.SetupSeconds = ptr(2.5)
	g.SetupStages = map[string]float64{"key_load": 2, "upload": 0.5}
	g.EnergyJoules = ptr(700.0)
	g.JoulesPerProof = ptr(350.0)
	return run
}

func TestCSVDeviceTimeSetupEnergy(t *testing.T) {
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, deviceFixture()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	want := map[string]string{
		"device_seconds_per_partition": "0.355", "measure": "warm", "setup_seconds": "2.5",
		"energy_joules": "700", "joules_per_proof": "350",
		"device_stage.msm_h": "0.255", "device_stage.ntt_region": "0.1",
		"setup_stage.key_load": "2", "setup_stage.upload": "0.5",
	}
	budget, hold := rows[len(rows)-1], rows[2]
	for name, v := range want {
		i, ok := col[name]
		if !ok {
			t.Errorf("no column %s in %v", name, rows[0])
			continue
		}
		if budget[i] != v {
			t.Errorf("budget %s = %q, want %q", name, budget[i], v)
		}
		if hold[i] != "" {
			t.Errorf("hold lacks %s but its cell reads %q, want empty", name, hold[i])
		}
	}
}

func TestBenchfmtDeviceTimeSetupEnergy(t *testing.T) {
	var buf bytes.Buffer
	if err := results.WriteBenchfmt(&buf, deviceFixture()); err != nil {
		t.Fatal(err)
	}
	rd := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "results.bench")
	var got []map[string]float64
	for rd.Scan() {
		if res, ok := rd.Result().(*benchfmt.Result); ok {
			vals := map[string]float64{}
			for _, v := range res.Values {
				vals[v.Unit] = v.Value
			}
			got = append(got, vals)
		}
	}
	if err := rd.Err(); err != nil || len(got) != 3 {
		t.Fatalf("%d lines, %v", len(got), err)
	}
	want := map[string]float64{
		results.UnitDevicePerPartition: 0.355, results.DeviceStageUnit("ntt_region"): 0.1,
		results.DeviceStageUnit("msm_h"): 0.255, results.UnitSetup: 2.5, results.UnitJoulesPerProof: 350,
	}
	budget := got[2]
	for unit, v := range want {
		if g, ok := budget[unit]; !ok || g != v {
			t.Errorf("budget %s = %v (present %v), want %v", unit, g, ok, v)
		}
		if _, ok := got[0][unit]; ok {
			t.Errorf("hold lacks %s but its line has it", unit)
		}
	}
}
