package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/predict/calibcache"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
	"github.com/provebench/provebench/scenarios"
)

// calibrationFixture is a real calibration run: every strategy at 2^10 and
// 2^12 constraints on the CPU backend, 3 repetitions each.
const calibrationFixture = "../../predict/calibcache/testdata/calibration-cpu.json"

// cacheFixture stores the fixture's scenarios that keep accepts in the
// calibration cache of keys, as if this host had run them.
func cacheFixture(t *testing.T, keys string, keep func(*results.Scenario) bool) {
	t.Helper()
	doc, err := results.Read(calibrationFixture)
	if err != nil {
		t.Fatal(err)
	}
	doc.Environment = run.HostEnvironment(context.Background())
	var kept []results.Scenario
	for _, sc := range doc.Scenarios {
		if keep(&sc) {
			kept = append(kept, sc)
		}
	}
	doc.Scenarios = kept
	if _, err := (calibcache.Cache{Dir: calibcache.Dir(keys)}).Store(doc); err != nil {
		t.Fatal(err)
	}
}

func allScenarios(*results.Scenario) bool { return true }

// A configuration whose strategy's bound passes its memory_limit but whose
// calibrated prediction does not: refused without the cache, run with it.
const limitedScenario = `version: 1
defaults:
  backend: cpu
  key: random
  repeats: 1
  warmups: 0
  memory_limit: 100MiB
  workload: {constraints: 2^12, partitions: 4, proofs: 2, concurrency: 1, synthesis_rounds: 4}
  pipeline: {partition_workers: 2, channel_capacity: 1}
scenarios:
  - name: release
    pipeline: {strategy: release}
`

// preflightOutput runs the pre-flight check of run on a scenario file.
func preflightOutput(t *testing.T, keys, file string, f runFlags) (string, error) {
	t.Helper()
	specs, err := scenarios.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	f.cacheDir = keys
	var out bytes.Buffer
	err = preflight(context.Background(), &out, specs, run.HostEnvironment(context.Background()), f)
	return out.String(), err
}

func TestPreflightPredictsFromTheCache(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	t.Setenv("PROVEBENCH_CACHE", keys)
	scen := writeFile(t, dir, "limited.yaml", limitedScenario)

	if code := runCLI(t, "run", scen, "-o", filepath.Join(dir, "never"), "--no-report"); code != exitUsage {
		t.Fatalf("with an empty cache the bound passes memory_limit: exit %d, want %d", code, exitUsage)
	}
	cacheFixture(t, keys, allScenarios)
	out, err := preflightOutput(t, keys, scen, runFlags{})
	if err != nil || !strings.Contains(out, "predicted from 1 cached run of this host, cpu backend, calibrated at 2^10..2^12 constraints") {
		t.Fatalf("pre-flight with a cached calibration: %v\n%s", err, out)
	}
	if _, err := preflightOutput(t, keys, scen, runFlags{noCalibrationCache: true}); err == nil || !strings.Contains(err.Error(), "bounded by") {
		t.Fatalf("--no-calibration-cache: %v; want the bound's refusal", err)
	}
	if code := runCLI(t, "run", scen, "-o", filepath.Join(dir, "ran"), "--no-report"); code != exitOK {
		t.Fatalf("with the cached calibration the run exited %d, want %d", code, exitOK)
	}
	env := run.HostEnvironment(context.Background())
	files, err := calibcache.Cache{Dir: calibcache.Dir(keys)}.Files(env, "cpu")
	if err != nil || len(files) != 2 {
		t.Fatalf("the run did not join the cache: %v, %v", files, err)
	}
	if code := runCLI(t, "run", scen, "-o", filepath.Join(dir, "uncached"), "--no-report", "--no-calibration-cache", "--force"); code != exitOK {
		t.Fatalf("--force --no-calibration-cache exited %d", code)
	}
	if again, _ := (calibcache.Cache{Dir: calibcache.Dir(keys)}).Files(env, "cpu"); len(again) != 2 {
		t.Fatalf("--no-calibration-cache added to the cache: %v", again)
	}
}

func TestPreflightFallsBackWithoutAUsableCache(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	for _, tc := range []struct {
		name, want string
		fill       func(keys string)
	}{
		{"empty", "the strategy's bound (no cached run of the cpu backend on this host)", func(string) {}},
		{"one size", "are calibrated at one size (2^10 constraints): every cost law's exponent is assumed 1", func(keys string) {
			cacheFixture(t, keys, func(sc *results.Scenario) bool { return sc.Constraints == 1<<10 })
		}},
		{"not a document", "the cached runs do not calibrate", func(keys string) {
			cacheFixture(t, keys, allScenarios)
			files, _ := calibcache.Cache{Dir: calibcache.Dir(keys)}.Files(run.HostEnvironment(context.Background()), "cpu")
			if err := os.WriteFile(files[0], []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		keys := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		tc.fill(keys)
		out, err := preflightOutput(t, keys, scen, runFlags{})
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("%s cache: %v\n%s\nwant %q", tc.name, err, out, tc.want)
		}
	}
}

func TestPreflightRefusesPoRepSizeWithACachedCalibration(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	t.Setenv("PROVEBENCH_CACHE", keys)
	cacheFixture(t, keys, allScenarios)
	const porep = "../../scenarios/cuzk-phase12.yaml"
	out := filepath.Join(dir, "never")
	start := time.Now()
	if code := runCLI(t, "run", porep, "--backend", "cpu", "-o", out); code != exitUsage {
		t.Fatalf("run of a PoRep-sized scenario exited %d, want %d", code, exitUsage)
	}
	// Refused before any key is made: a second or two, where making the
	// PoRep-sized key or proving would take hours; a minute holds on a
	// loaded 2-core runner and still tells the two apart.
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the refusal took %s", took)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote %s", out)
	}
	if keyFiles, _ := filepath.Glob(filepath.Join(keys, "*.key")); len(keyFiles) > 0 {
		t.Errorf("the refused run wrote keys: %v", keyFiles)
	}
	specs, err := loadSpecs([]string{porep})
	if err != nil {
		t.Fatal(err)
	}
	specs, err = applyRunFlags(specs, runFlags{backend: "cpu", warmups: -1})
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	err = preflight(context.Background(), &w, specs, run.HostEnvironment(context.Background()), runFlags{cacheDir: keys})
	if err == nil || !strings.Contains(err.Error(), "cached run of this host") {
		t.Fatalf("pre-flight of a PoRep-sized scenario with a cached calibration: %v", err)
	}
}

func TestCalibrationShowsTheCache(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	var w bytes.Buffer
	if err := runCalibration(context.Background(), &w, keys, false); err != nil || !strings.Contains(w.String(), "no cached run of this host") {
		t.Fatalf("an empty cache: %v\n%s", err, w.String())
	}
	cacheFixture(t, keys, allScenarios)
	w.Reset()
	if err := runCalibration(context.Background(), &w, keys, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cpu backend: 1 cached run", "pre-flight: predicted from 1 cached run of this host", "baseline RSS"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("calibration --explain does not say %q:\n%s", want, w.String())
		}
	}
}

func TestRunSurvivesACacheItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	t.Setenv("PROVEBENCH_CACHE", keys)
	// A file where the calibration folder should be: neither read nor
	// written, and the run goes on.
	if err := os.MkdirAll(keys, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, keys, "calibration", "not a folder")
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	if code := runCLI(t, "run", scen, "-o", out, "--no-report", "--repeat", "1"); code != exitOK {
		t.Fatalf("run with an unwritable calibration cache exited %d, want %d", code, exitOK)
	}
	if _, err := results.Read(filepath.Join(out, "results.json.gz")); err != nil {
		t.Fatal(err)
	}
}

// Cached runs of another commit measured another prover: pre-flight
// calibrates on the newest run's commit and says what it left out.
func TestPreflightCalibratesOnTheNewestCommit(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "s.yaml", limitedScenario)
	keys := filepath.Join(dir, "keys")
	cacheFixture(t, keys, allScenarios)
	doc, err := results.Read(calibrationFixture)
	if err != nil {
		t.Fatal(err)
	}
	doc.Environment = run.HostEnvironment(context.Background())
	doc.ToolVersion = "(devel) 0123456789abcdef0123456789abcdef01234567"
	doc.StartedAt = doc.StartedAt.Add(time.Hour)
	if _, err := (calibcache.Cache{Dir: calibcache.Dir(keys)}).Store(doc); err != nil {
		t.Fatal(err)
	}
	out, err := preflightOutput(t, keys, scen, runFlags{})
	want := "predicted from 1 cached run of this host, cpu backend, calibrated at 2^10..2^12 constraints (1 cached run of other commits left out)"
	if err != nil || !strings.Contains(out, want) {
		t.Errorf("%v\n%s\nwant %q", err, out, want)
	}
}
