package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
)

// Regression tests of issue 13 (hardening): the command line.

// capture runs provebench with args and returns its exit status, stdout and
// stderr.
func capture(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	read := func(f **os.File) func() string {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		old := *f
		*f = w
		done := make(chan string)
		go func() {
			b, _ := io.ReadAll(r)
			done <- string(b)
		}()
		return func() string {
			*f = old
			w.Close()
			return <-done
		}
	}
	out, errOut := read(&os.Stdout), read(&os.Stderr)
	code = execute(context.Background(), args)
	return code, out(), errOut()
}

func TestFlagsAndCommands(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	good := writeFile(t, dir, "good.yaml", tinyScenario)
	file := writeFile(t, dir, "file", "")
	locked := filepath.Join(dir, "locked")
	unlock, err := run.LockOutDir(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	never := filepath.Join(dir, "never")
	for _, tc := range []struct {
		name string
		args []string
		want int
		msg  string // in stderr
	}{
		{"unknown command", []string{"bogus"}, exitUsage, `unknown command "bogus"`},
		{"repeat 0", []string{"run", good, "--repeat", "0", "-o", never}, exitUsage, "--repeat 0: must be at least 1"},
		{"negative warmups", []string{"run", good, "--warmups", "-3", "-o", never}, exitUsage, "--warmups -3: must be at least 0"},
		{"sample interval 0", []string{"run", good, "--sample-interval", "0", "-o", never}, exitUsage, "--sample-interval 0s: must be at least 1ms"},
		{"sample interval past the timeout", []string{"run", good, "--sample-interval", "10h", "-o", never}, exitUsage, "longer than the timeout"},
		{"output under a file", []string{"run", good, "-o", filepath.Join(file, "out")}, exitUsage, "not a directory"},
		{"output in use", []string{"run", good, "-o", locked}, exitUsage, "in use by another provebench run"},
		{"validate files sharing names", []string{"validate", "../../scenarios/quickstart.yaml", "../../scenarios/ci.yaml"}, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			if code != tc.want || !strings.Contains(stderr, tc.msg) {
				t.Fatalf("provebench %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.want, tc.msg)
			}
		})
	}
	if _, err := os.Stat(never); !os.IsNotExist(err) {
		t.Error("bad flags left an output directory behind")
	}

	code, stdout, _ := capture(t, "--version")
	if code != exitOK || !strings.HasPrefix(stdout, "provebench ") || !strings.Contains(stdout, "\ncommit ") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
	_, stdout, _ = capture(t, "run", "--help")
	if strings.Contains(stdout, "(default -1)") || !strings.Contains(stdout, "--warmups") {
		t.Errorf("run --help shows a sentinel default:\n%s", stdout)
	}
}

// Scenario problems start at the first column with file:line:col.
func TestScenarioErrorsStartWithTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.yaml", "version: 1\nscenarios:\n  - name: x\n    workload: {proofs: \"2\"}\n")
	code, _, stderr := capture(t, "validate", bad)
	if code != exitUsage || !strings.HasPrefix(stderr, bad+":4:24: scenarios[0].workload.proofs: ") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// Item 10: the first interrupt cancels, the second quits at once. In a
// synctest bubble: synctest.Wait returns once the handler has done all it
// does at the first interrupt (it waits for the next), and a handler that
// never quits leaves the bubble deadlocked, which fails the test.
func TestSecondInterruptQuits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sig := make(chan os.Signal, 2)
		cancelled, exited := make(chan struct{}), make(chan struct{})
		go onInterrupt(sig, func() { close(cancelled) }, true, func() { close(exited) })
		sig <- os.Interrupt
		<-cancelled
		synctest.Wait()
		select {
		case <-exited:
			t.Fatal("quit at the first interrupt")
		default:
		}
		sig <- os.Interrupt
		<-exited
	})
}

// Items 9 and 11: report and compare validate what they read; compare fails
// when the new run lacks a configuration; auto says why it used the CPU.
func TestReadersAndAuto(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	out := filepath.Join(dir, "a")
	code, _, stderr := capture(t, "run", scen, "--backend", "auto", "--repeat", "1", "--no-report", "-o", out)
	if code != exitOK {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "backend auto: CUDA not used"); n != 1 {
		t.Errorf("auto's reason said %d times, want once:\n%s", n, stderr)
	}
	base := filepath.Join(out, "results.json.gz")
	doc, err := results.Read(base)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, mutate func(*results.Run)) string {
		var d results.Run
		data, _ := json.Marshal(doc)
		json.Unmarshal(data, &d)
		mutate(&d)
		data, _ = json.Marshal(&d)
		return writeFile(t, dir, name, string(data))
	}
	empty := write("empty.json", func(d *results.Run) { d.Scenarios = nil })
	bogus := write("bogus.json", func(d *results.Run) {
		for i := range d.Scenarios {
			for j := range d.Scenarios[i].Repetitions {
				d.Scenarios[i].Repetitions[j].Status = "bogus"
			}
		}
	})
	ragged := write("ragged.json", func(d *results.Run) {
		s := d.Scenarios[0].Repetitions[0].Series
		s.RSSBytes = s.RSSBytes[:len(s.RSSBytes)-1]
	})
	partial := write("partial.json", func(d *results.Run) { d.Scenarios = d.Scenarios[:1] })
	for _, tc := range []struct {
		args []string
		want int
		msg  string
	}{
		{[]string{"report", empty, "-o", filepath.Join(dir, "r")}, exitUsage, "no scenarios"},
		{[]string{"report", bogus, "-o", filepath.Join(dir, "r")}, exitUsage, `"bogus" is not one of`},
		{[]string{"report", ragged, "-o", filepath.Join(dir, "r")}, exitUsage, "rss_bytes"},
		{[]string{"compare", base, bogus}, exitUsage, `"bogus" is not one of`},
		{[]string{"compare", base, partial}, exitUsage, "lacks 1 of the baseline's configurations (hold)"},
		{[]string{"compare", partial, base}, exitOK, ""},
	} {
		code, _, stderr := capture(t, tc.args...)
		if code != tc.want || !strings.Contains(stderr, tc.msg) {
			t.Errorf("provebench %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.want, tc.msg)
		}
	}
}
