package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provebench/provebench/predict/calibcache"
	"github.com/provebench/provebench/results"
)

func TestAB(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	summary := filepath.Join(dir, "summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	out := filepath.Join(dir, "ab")
	code := runCLI(t, "ab", scen, "--filter", "^hold$", "--pairs", "6", "--warmups", "1", "-o", out)
	// Identical sides: a regression would need a whole 95% interval past
	// 5%, and a loaded machine may leave wall time not judged (4); the
	// exit status is checked loosely, the records exactly.
	if code != exitOK && code != exitRegression && code != exitInconclusive {
		t.Fatalf("ab exited %d", code)
	}
	base, err := results.Read(filepath.Join(out, "base", "results.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := results.Read(filepath.Join(out, "new", "results.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Scenarios) != 1 || len(cur.Scenarios) != 1 || base.Scenarios[0].Name != "hold" || !base.Complete {
		t.Fatalf("scenarios: base %d, new %d", len(base.Scenarios), len(cur.Scenarios))
	}
	b, n := base.Scenarios[0].Repetitions, cur.Scenarios[0].Repetitions
	if len(b) != 7 || len(n) != 7 || !b[0].Warmup || !n[0].Warmup {
		t.Fatalf("repetitions: base %d, new %d; want a warm-up and 6 pairs each", len(b), len(n))
	}
	for i := 1; i < 7; i++ {
		if b[i].Index != i || n[i].Index != i || b[i].Status != results.StatusOK || b[i].HostLoad == nil {
			t.Fatalf("pair %d: indexes %d/%d, status %s, host load %v", i, b[i].Index, n[i].Index, b[i].Status, b[i].HostLoad)
		}
		// ABBA: base first in odd pairs, new first in even ones.
		baseFirst := b[i].StartedAt.Before(n[i].StartedAt)
		if baseFirst != (i%2 == 1) {
			t.Errorf("pair %d: base first %v", i, baseFirst)
		}
	}
	if base.Scenarios[0].Spec == nil || base.Environment.CPUs == 0 {
		t.Error("the side's scenario record or host was not kept")
	}
	md, err := os.ReadFile(filepath.Join(out, "ab.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The headline says what the exit status says.
	label := map[int]string{exitOK: "✅ OK", exitRegression: "❌ REGRESSION", exitInconclusive: "⚠️ INCONCLUSIVE"}[code]
	for _, want := range []string{"### provebench ab: " + label, "6 pairs", "smallest change this run could detect", "device_seconds_per_partition"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("ab.md lacks %q", want)
		}
	}
	// Issue 20 item 17: ab's one-repetition children do not fill the
	// calibration cache.
	if cached, _ := filepath.Glob(filepath.Join(calibcache.Dir(filepath.Join(dir, "keys")), "*", "*", "*.json")); len(cached) > 0 {
		t.Errorf("ab's children wrote the calibration cache: %v", cached)
	}
	if st, err := os.Stat(summary); err != nil || st.Size() == 0 {
		t.Errorf("ab did not append to $GITHUB_STEP_SUMMARY: %v", err)
	}
}

func TestABBadInput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	good := writeFile(t, dir, "good.yaml", tinyScenario)
	other := writeFile(t, dir, "other.yaml", strings.ReplaceAll(tinyScenario, "name: ", "name: x-"))
	cuda := writeFile(t, dir, "cuda.yaml", strings.Replace(tinyScenario, "backend: cpu", "backend: auto", 1))
	bad := writeFile(t, dir, "bad.yaml", "version: 1\nscenarios:\n  - name: x\n    pipeline: {strategy: hurry}\n")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no files", []string{"ab"}},
		{"too few pairs", []string{"ab", good, "--pairs", "3"}},
		{"bad scenario", []string{"ab", "--base-scenario", bad, "--new-scenario", good}},
		{"no shared configuration", []string{"ab", "--base-scenario", good, "--new-scenario", other}},
		{"different backends", []string{"ab", "--base-scenario", good, "--new-scenario", cuda}},
		{"base binary refuses", []string{"ab", good, "--base-binary", "/bin/false"}},
		{"bad threshold", []string{"ab", good, "--threshold", "nope=1%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "never")
			if got := runCLI(t, append(tc.args, "-o", out)...); got != exitUsage {
				t.Fatalf("provebench %v: exit %d, want %d", tc.args, got, exitUsage)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Error("bad input left an output directory behind")
			}
		})
	}
}

// TestABOldBaseFallsBack: a base binary that cannot serve repetitions (its
// run --help has no --serve, as before warm sides existed) runs a process
// per repetition, the new side stays warm, and the report says which way
// each side ran.
func TestABOldBaseFallsBack(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// An old binary, as far as ab can tell: the same code, but its help
	// does not offer --serve.
	old := writeFile(t, dir, "old.sh", "#!/bin/sh\n"+
		"case \"$*\" in *--help*) \""+self+"\" \"$@\" | grep -v -- '--serve'; exit 0;; esac\n"+
		"exec \""+self+"\" \"$@\"\n")
	if err := os.Chmod(old, 0o755); err != nil {
		t.Fatal(err)
	}
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	out := filepath.Join(dir, "ab")
	code := runCLI(t, "ab", scen, "--filter", "^hold$", "--pairs", "6", "--warmups", "0", "--base-binary", old, "-o", out)
	if code != exitOK && code != exitInconclusive && code != exitRegression {
		t.Fatalf("ab exited %d", code)
	}
	for side, warm := range map[string]bool{"base": false, "new": true} {
		doc, err := results.Read(filepath.Join(out, side, "results.json.gz"))
		if err != nil {
			t.Fatal(err)
		}
		reps := doc.Scenarios[0].Repetitions
		if len(reps) != 6 {
			t.Fatalf("%s: %d repetitions, want 6", side, len(reps))
		}
		for _, r := range reps {
			if (r.Worker != nil) != warm {
				t.Errorf("%s repetition %d: worker %+v, want warm %v", side, r.Index, r.Worker, warm)
			}
			if !warm && r.SetupSeconds == nil {
				t.Errorf("%s repetition %d: a process per repetition pays (and records) its setup", side, r.Index)
			}
		}
	}
	txt, err := os.ReadFile(filepath.Join(out, "ab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "base ran in a process per repetition (its binary cannot serve"; !strings.Contains(string(txt), want) {
		t.Errorf("ab.txt does not say %q:\n%s", want, txt)
	}
}
