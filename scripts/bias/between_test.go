package bias

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stubPredict stands in for scripts/bias/predict.sh predict: it writes
// $DIR/prediction, or fails where $DIR contains $FAIL_AT.
const stubPredict = `#!/usr/bin/env bash
set -eu
case $DIR in *"${FAIL_AT:-none}"*) echo "stub: fails at $DIR" >&2; exit 2 ;; esac
mkdir -p "$DIR/prediction"
echo "$CAL" >"$DIR/prediction/README.md"
printf 'configuration  ok/runs\nhold 1/1\n\n'
`

// betweenRepo is a git repository holding between.sh (this folder's) and
// the stub predict.sh, with a file staged that is none of between.sh's,
// and the folder of the first call's two packs: the calibration's on
// GPU-1, the gate run's on gateGPU.
func betweenRepo(t *testing.T, gateGPU string) (repo, files string) {
	t.Helper()
	repo, files = t.TempDir(), t.TempDir()
	script, err := os.ReadFile("between.sh")
	if err != nil {
		t.Fatal(err)
	}
	write := func(path, text string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, "scripts/bias/between.sh"), string(script), 0o755)
	write(filepath.Join(repo, "scripts/bias/predict.sh"), stubPredict, 0o755)
	write(filepath.Join(repo, "docs/results/h200-frozen26/README.md"), "the plan\n", 0o644)
	run(t, repo, "git", "init", "-q")
	run(t, repo, "git", "config", "user.name", "test")
	run(t, repo, "git", "config", "user.email", "test@localhost")
	run(t, repo, "git", "add", ".")
	run(t, repo, "git", "commit", "-q", "-m", "start")
	write(filepath.Join(repo, "other.txt"), "someone else's work\n", 0o644)
	run(t, repo, "git", "add", "other.txt")
	write(filepath.Join(repo, "docs/results/h200-frozen26/README.md"), "the plan, edited\n", 0o644)

	packs := t.TempDir()
	write(filepath.Join(packs, "cal/version.txt"), "provebench v0.0.0\ncommit 0123abc456def\n", 0o644)
	write(filepath.Join(packs, "cal/env.txt"), "GPU-1\n", 0o644)
	write(filepath.Join(packs, "cal/runs/results.json.gz"), "cal", 0o644)
	// Uncompressed (zcat -f reads both), as far as between.sh reads it.
	doc := `{"environment":{"gpus":[{"uuid":"` + gateGPU + `"}]}}`
	write(filepath.Join(packs, "g26/identical-big26-1/base/results.json.gz"), doc, 0o644)
	write(filepath.Join(packs, "g26/identical-big26-1/new/results.json.gz"), doc, 0o644)
	write(filepath.Join(packs, "g26/identical-big26-1.log"), "log", 0o644)
	run(t, packs, "tar", "-czf", filepath.Join(files, "cal.tar.gz"), "cal")
	run(t, packs, "tar", "-czf", filepath.Join(files, "g26.tar.gz"), "g26")
	return repo, files
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestBetweenLeavesNothingHalfDone: a step that fails (here the 2^24
// prediction) commits nothing and leaves nothing in docs/results that
// would refuse the next attempt, which then commits the gate run, the
// calibration and both predictions, and nothing else that was staged or
// edited.
func TestBetweenLeavesNothingHalfDone(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	repo, files := betweenRepo(t, "GPU-1")
	between := exec.Command("scripts/bias/between.sh", files)
	between.Dir = repo
	between.Env = append(os.Environ(), "FAIL_AT=h200-frozen24")
	if out, err := between.CombinedOutput(); err == nil {
		t.Fatalf("between.sh with the 2^24 prediction failing: exit 0\n%s", out)
	}
	if n := strings.TrimSpace(run(t, repo, "git", "rev-list", "--count", "HEAD")); n != "1" {
		t.Errorf("%s commits after a failed step, want 1 (nothing committed)", n)
	}
	for _, p := range []string{"docs/results/h200-frozen26/calibration/cal23", "docs/results/h200-gate/big26-0123abc/identical-big26-1", "docs/results/h200-frozen26/prediction"} {
		if _, err := os.Stat(filepath.Join(repo, p)); err == nil {
			t.Errorf("%s left behind by the failed attempt", p)
		}
	}
	if staged := strings.Fields(run(t, repo, "git", "diff", "--cached", "--name-only")); len(staged) != 1 || staged[0] != "other.txt" {
		t.Errorf("staged after the failed attempt: %v, want other.txt alone", staged)
	}

	again := exec.Command("scripts/bias/between.sh", files)
	again.Dir = repo
	if out, err := again.CombinedOutput(); err != nil {
		t.Fatalf("between.sh again: %v\n%s", err, out)
	}
	got := strings.Fields(run(t, repo, "git", "show", "--name-only", "--format=", "HEAD"))
	want := []string{
		"docs/results/h200-frozen24/prediction/README.md",
		"docs/results/h200-frozen26/calibration/cal23/env.txt",
		"docs/results/h200-frozen26/calibration/cal23/results.json.gz",
		"docs/results/h200-frozen26/calibration/cal23/version.txt",
		"docs/results/h200-frozen26/prediction/README.md",
		"docs/results/h200-gate/big26-0123abc/identical-big26-1.log",
		"docs/results/h200-gate/big26-0123abc/identical-big26-1/base/results.json.gz",
		"docs/results/h200-gate/big26-0123abc/identical-big26-1/new/results.json.gz",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("committed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if staged := strings.Fields(run(t, repo, "git", "diff", "--cached", "--name-only")); len(staged) != 1 || staged[0] != "other.txt" {
		t.Errorf("staged after the commit: %v, want other.txt alone, still staged", staged)
	}
}

// TestRepredictsNeedsFiguresOnBothSides: predict.sh check's repredicts
// (the model at HEAD predicts the committed figures exactly) says so only
// where both documents hold the same figures; two documents jq cannot
// read are not "the same".
func TestRepredictsNeedsFiguresOnBothSides(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("no jq")
	}
	src, err := os.ReadFile("predict.sh")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start := strings.Index(text, "\nrepredicts() {")
	end := strings.Index(text[start:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("predict.sh: no repredicts function")
	}
	fn := text[start : start+end+3]
	dir := t.TempDir()
	doc := func(name, json string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(json), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fig := `{"scenarios":[{"name":"a","repetitions":[{"status":"ok","partitions_per_second":1.5,"seconds_per_proof":4,"peak_rss_bytes":7}]}]}`
	other := `{"scenarios":[{"name":"a","repetitions":[{"status":"ok","partitions_per_second":1.6,"seconds_per_proof":4,"peak_rss_bytes":7}]}]}`
	for _, c := range []struct {
		what, simulated, committed string
		same                       bool
	}{
		{"the same figures", fig, fig, true},
		{"another figure", other, fig, false},
		{"neither document readable", "not json", "not json", false},
		{"no configuration either side", `{"scenarios":[]}`, `{"scenarios":[]}`, false},
	} {
		sim := doc("simulated.json", c.simulated)
		committed := doc("committed.json", c.committed)
		// BIN stands in for provebench simulate: it writes the simulated
		// document where -o says (uncompressed: zcat -f reads both).
		bin := doc("bin.sh", "#!/bin/sh\nfor a; do out=$a; done\nmkdir -p \"$out\" && cp "+sim+" \"$out/results.json.gz\"\n")
		if err := os.Chmod(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		tmp := t.TempDir()
		script := "set -uo pipefail\nTMP=" + tmp + " BIN=" + bin + " FILE=x.yaml\n" + fn + "\nrepredicts cal.json.gz " + committed + "\n"
		err := exec.Command("bash", "-c", script).Run()
		if got := err == nil; got != c.same {
			t.Errorf("%s: repredicts says same=%v, want %v (%v)", c.what, got, c.same, err)
		}
	}
}

// TestBetweenTakesEachCallsFolder: the packs may come back from two calls,
// each in its own folder; a pack found twice is refused before anything
// is written, since which of the two to commit is not between.sh's choice.
func TestBetweenTakesEachCallsFolder(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	repo, files := betweenRepo(t, "GPU-1")
	second := t.TempDir()
	if err := os.Rename(filepath.Join(files, "g26.tar.gz"), filepath.Join(second, "g26.tar.gz")); err != nil {
		t.Fatal(err)
	}
	twice := exec.Command("scripts/bias/between.sh", files, second, second)
	twice.Dir = repo
	if out, err := twice.CombinedOutput(); err == nil || !strings.Contains(string(out), "2 files named g26.tar.gz") {
		t.Errorf("between.sh with g26.tar.gz found twice: %v\n%s", err, out)
	}
	if n := strings.TrimSpace(run(t, repo, "git", "rev-list", "--count", "HEAD")); n != "1" {
		t.Fatalf("%s commits after a refused start, want 1", n)
	}
	between := exec.Command("scripts/bias/between.sh", files, second)
	between.Dir = repo
	if out, err := between.CombinedOutput(); err != nil {
		t.Fatalf("between.sh FILES SECOND: %v\n%s", err, out)
	}
	if n := strings.TrimSpace(run(t, repo, "git", "rev-list", "--count", "HEAD")); n != "2" {
		t.Errorf("%s commits, want 2 (the packs committed)", n)
	}
}

// TestBetweenRefusesTwoMachines: the calibration's 2^23 runs and the gate
// run at 2^26 come back from two calls; from two machines they are
// refused, nothing written.
func TestBetweenRefusesTwoMachines(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
	repo, files := betweenRepo(t, "GPU-2")
	between := exec.Command("scripts/bias/between.sh", files)
	between.Dir = repo
	out, err := between.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the calibration ran on GPU-1, the gate run on GPU-2: not one machine") {
		t.Errorf("between.sh with two machines' packs: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(repo, "docs/results/h200-frozen26/calibration/cal23")); err == nil {
		t.Error("cal23 written for two machines' packs")
	}
}
