package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// Regression tests of issue 25 (never pass blind) and issue 20 items 14
// and 20 (compare's headline and exit status agree; folders as input).

// abFolder writes the two sides of a synthetic ab run under dir/base and
// dir/new: pairs of repetitions sharing a load factor, wall time (and the
// CPU backend's device time) moving with it. wall and device scale the
// new side; load1 is every repetition's load average on 2 CPUs.
func abFolder(t *testing.T, dir, backend string, seed uint64, load1, wallNoise, wall, device float64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 14))
	doc := func() *results.Run {
		return &results.Run{Schema: results.SchemaVersion, Tool: "provebench", Complete: true,
			Environment: results.Environment{CPUs: 2, CPUModel: "x"},
			Scenarios:   []results.Scenario{{Name: "s", Strategy: "hold", Backend: backend}}}
	}
	sides := []*results.Run{doc(), doc()}
	for i := 1; i <= 12; i++ {
		load := 1 + rng.Float64()
		for k, run := range sides {
			w, d := 1.0, 0.1
			if k == 1 {
				w, d = wall, 0.1*device
			}
			w *= load * (1 + wallNoise*rng.NormFloat64())
			d *= 1 + 0.005*rng.NormFloat64()
			if backend == "cpu" {
				d *= load
			}
			run.Scenarios[0].Repetitions = append(run.Scenarios[0].Repetitions, results.Repetition{
				Index: i, Status: results.StatusOK, Partitions: 6, Proofs: 1,
				WallSeconds: w, SecondsPerProof: w, PartitionsPerSecond: 6 / w, DeviceSecondsPerPartition: &d,
				CPUUserSeconds: 1 + 0.005*rng.NormFloat64(), PeakRSSBytes: 100 << 20,
				HostLoad: &results.HostLoad{Load1: load1},
			})
		}
	}
	for k, name := range []string{"base", "new"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.Write(filepath.Join(dir, name, "results.json"), sides[k]); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func headline(stdout string) string {
	line, _, _ := strings.Cut(stdout, "\n")
	return line
}

func TestPairedGateExitStatuses(t *testing.T) {
	for _, tc := range []struct {
		name           string
		backend        string
		load1, noise   float64
		wall, device   float64
		want           int
		label, mention string
		flags          []string
	}{
		{"device time +25%", "cuda", 1, 0.02, 1, 1.25, exitRegression, "REGRESSION", "device_seconds_per_partition", nil},
		{"device time +25% under a CPU hog", "cuda", 11, 0.3, 1, 1.25, exitRegression, "REGRESSION", "device_seconds_per_partition", nil},
		{"identical", "cpu", 1, 0.02, 1, 1, exitOK, "OK", "no regression", nil},
		{"wall-only +20% under a CPU hog", "cpu", 11, 0.3, 1.2, 1, exitInconclusive, "INCONCLUSIVE", "host oversubscribed", nil},
		// Identical sides under a hog: wall time and the CPU backend's
		// device time are not judged; by default the verdict rests on CPU
		// time and says so, and a team that wants wall time judged gets
		// exit 4 (issue 39).
		{"identical under a CPU hog", "cpu", 11, 0.3, 1, 1, exitOK, "OK", "wall time NOT JUDGED", nil},
		{"identical under a CPU hog, inconclusive asked", "cpu", 11, 0.3, 1, 1, exitInconclusive, "INCONCLUSIVE", "seconds_per_proof", []string{"--host-clock-unjudged", "inconclusive"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := abFolder(t, t.TempDir(), tc.backend, 3, tc.load1, tc.noise, tc.wall, tc.device)
			code, stdout, _ := capture(t, append([]string{"compare", "--paired", dir}, tc.flags...)...)
			head := headline(stdout)
			if code != tc.want || !strings.HasPrefix(head, "provebench ab: "+tc.label+": ") || !strings.Contains(head, tc.mention) {
				t.Errorf("exit %d, headline %q; want %d, %s, naming %q", code, head, tc.want, tc.label, tc.mention)
			}
		})
	}
}

func TestCompareHeadlineSaysWhatTheExitSays(t *testing.T) {
	dir := t.TempDir()
	doc := func(names ...string) string {
		run := &results.Run{Schema: results.SchemaVersion, Tool: "provebench", Complete: true,
			Environment: results.Environment{CPUs: 2, CPUModel: "x"}}
		for _, n := range names {
			run.Scenarios = append(run.Scenarios, results.Scenario{Name: n, Backend: "cpu",
				Repetitions: []results.Repetition{{Index: 1, Status: results.StatusOK, SecondsPerProof: 1}}})
		}
		sub := filepath.Join(dir, strings.Join(names, "+"))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.Write(filepath.Join(sub, "results.json"), run); err != nil {
			t.Fatal(err)
		}
		return sub
	}
	base, renamed := doc("Hold", "x"), doc("hold", "x")
	code, stdout, _ := capture(t, "compare", base, renamed)
	head := headline(stdout)
	if code != exitUsage || !strings.HasPrefix(head, "provebench compare: INCOMPLETE: ") ||
		!strings.Contains(head, `"Hold" (the new run has "hold"`) {
		t.Errorf("names differing in case: exit %d, headline %q", code, head)
	}
	if strings.Contains(stdout, "OK") {
		t.Errorf("an exit of 2 under an OK:\n%s", stdout)
	}
	// Folders and the documents in them compare alike.
	if code, stdout, _ := capture(t, "compare", base, filepath.Join(base, "results.json")); code != exitOK || !strings.HasPrefix(headline(stdout), "provebench compare: OK: ") {
		t.Errorf("folder against its document: exit %d, %q", code, headline(stdout))
	}
	for _, args := range [][]string{
		{"compare", base},                             // one folder without --paired
		{"compare", "--paired", dir},                  // no base/ and new/ in it
		{"compare", filepath.Join(dir, "none"), base}, // nothing there
	} {
		if code, _, stderr := capture(t, args...); code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want %d with a reason", args, code, stderr, exitUsage)
		}
	}
}

func TestABFlags(t *testing.T) {
	code, stdout, _ := capture(t, "ab", "--help")
	if code != exitOK {
		t.Fatalf("ab --help: exit %d", code)
	}
	warmups := 0
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--warmups") {
			warmups++
			if strings.Count(line, "default") != 1 {
				t.Errorf("--warmups shows %d defaults: %q", strings.Count(line, "default"), line)
			}
		}
	}
	if warmups != 1 {
		t.Errorf("ab --help has %d --warmups lines, want 1", warmups)
	}
	for _, want := range []string{"--until-resolved", "4 inconclusive"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("ab --help lacks %q", want)
		}
	}
	dir := t.TempDir()
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	for _, args := range [][]string{
		{"ab", scen, "--warmups", "-1"},
		{"ab", scen, "--until-resolved", "-1m"},
	} {
		out := filepath.Join(dir, "never")
		if code := runCLI(t, append(args, "-o", out)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: left an output directory", args)
		}
	}
}
