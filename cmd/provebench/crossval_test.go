package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

// Committed real runs on the CPU backend, of one commit: every strategy at
// 2^12 and 2^14, and at 2^15.
const (
	cpuCalibrate = "../../docs/results/cpu-simulate/calibrate/results.json.gz"
	cpuPredict   = "../../docs/results/cpu-simulate/predict/results.json.gz"
)

func TestSimulateCrossValidate(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "xval")
	code, stdout, stderr := capture(t, "simulate", "--cross-validate", cpuCalibrate, cpuPredict, "--family-by", "label:pipeline.strategy", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"12 configurations in 4 families (--family-by label:pipeline.strategy)", "| pipeline.strategy=release | predict/constraints=2^15/strategy=release | 2^15 | 5 | 9 |", "| peak_rss | all | 12 | 0 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	for name, want := range map[string]string{crossValCSVFile: "family,configuration,files,strategy", crossValSummaryFile: "seconds_per_proof,all,12,0,", crossValMarkdown: "# Cross-validation of the simulator"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, lacks %q", name, err, want)
		}
	}
	// Targets: missed is exit 3, and the Markdown says so.
	code, _, stderr = capture(t, "simulate", "--cross-validate", cpuCalibrate, cpuPredict, "--family-by", "config", "--target-p90", "0.01%", "--target-max", "15%", "-o", out)
	if code != exitRegression || !strings.Contains(stderr, "p90 |error|") {
		t.Errorf("missed target: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, crossValMarkdown)); !strings.Contains(string(b), "**Targets missed**") {
		t.Errorf("crossval.md does not say the targets were missed")
	}
	if code, _, stderr := capture(t, "simulate", "--cross-validate", cpuCalibrate, cpuPredict, "--family-by", "config", "--target-p90", "1000%", "--target-max", "1000%"); code != exitOK {
		t.Errorf("met targets: exit %d, %s", code, stderr)
	}
	// Bad input is exit 2.
	for _, args := range [][]string{
		{"--family-by", "strategy"},
		{"--target-p90", "ten"},
		{"--target-p90", "NaN%"}, // issue 32 item 7: a NaN target is never missed
		{"--target-max", "nan"},
		{"--target-p90", "+Inf%"},
		{"--target-max", "0%"},
		{cpuCalibrate}, // issue 32 item 14: a document given twice would count twice
		{"--explain"},
		{"--search"},
	} {
		if code := runCLI(t, append([]string{"simulate", "--cross-validate", cpuCalibrate, cpuPredict}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code := runCLI(t, "simulate", cpuCalibrate, "--family-by", "config"); code != exitUsage {
		t.Errorf("--family-by without --cross-validate: exit %d", code)
	}
}

// --calibration's documents are in every fold and never predicted: only
// the other document's configurations are in the table, each calibrated on
// the pinned set and the other families.
func TestSimulateCrossValidatePinsCalibration(t *testing.T) {
	code, stdout, stderr := capture(t, "simulate", "--cross-validate", cpuPredict, "--calibration", cpuCalibrate, "--family-by", "config")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// cpuCalibrate holds 8 configurations, cpuPredict 4: each of the 4 is
	// predicted from the 8 and the other 3.
	for _, want := range []string{"4 configurations in 4 families (--family-by config)", "and on the " + cpuCalibrate + " always", "| 2^15 | 5 | 11 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "| calibrate/") {
		t.Errorf("a pinned configuration was predicted:\n%s", stdout)
	}
	// A document both pinned and predicted is one given twice (issue 32
	// item 14): refused before it could leave nothing to predict.
	if code, _, stderr := capture(t, "simulate", "--cross-validate", cpuPredict, "--calibration", cpuCalibrate+","+cpuPredict); code != exitUsage || !strings.Contains(stderr, "given twice") {
		t.Errorf("everything pinned: exit %d, %s", code, stderr)
	}
}

func TestCalibrationRefusesMixedCommits(t *testing.T) {
	dir := t.TempDir()
	doc, err := results.Read(cpuPredict)
	if err != nil {
		t.Fatal(err)
	}
	doc.ToolVersion = "(devel) 0123456789abcdef0123456789abcdef01234567"
	other := filepath.Join(dir, "other.json")
	if err := results.Write(other, doc); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := capture(t, "simulate", "--cross-validate", cpuCalibrate, other)
	if code != exitUsage || !strings.Contains(stderr, cpuCalibrate+": 345693508163") || !strings.Contains(stderr, other+": 0123456789ab") {
		t.Errorf("mixed commits: exit %d, %s", code, stderr)
	}
	code, _, stderr = capture(t, "simulate", "--cross-validate", cpuCalibrate, other, "--allow-mixed-commits")
	if code != exitOK || !strings.Contains(stderr, "note: calibration: documents of 2 commits calibrate together") {
		t.Errorf("--allow-mixed-commits: exit %d, %s", code, stderr)
	}
	// run's pre-flight refuses them the same way.
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	if code, _, stderr := capture(t, "run", scen, "--calibration", cpuCalibrate+","+other, "-o", filepath.Join(dir, "never")); code != exitUsage || !strings.Contains(stderr, "different commits") {
		t.Errorf("run --calibration of two commits: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "never")); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote its folder")
	}
}

// Item 18 of issue 20: a calibration at one size says what it assumes.
func TestSimulateSaysOneSize(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "s.yaml", strings.Replace(tinyScenario, "2^7", "2^12", 1))
	code, _, stderr := capture(t, "simulate", scen, "--calibration", cpuPredict, "--no-report", "-o", filepath.Join(dir, "sim"))
	if code != exitOK || !strings.Contains(stderr, "note: calibrated at one size (2^15 constraints): every cost law's exponent is assumed 1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// slowScenario takes the simulator minutes: 2,000 configurations of
// PoRep-sized proofs, costs written in the file.
const slowScenario = `version: 1
defaults:
  backend: cuda
  key: random
  workload: {constraints: 2^27, partitions: 10, proofs: 400, concurrency: 4}
  simulate:
    synthesis: 45s
    gpu_start: 0.9s
    finalize: 0.92s
    abc_bytes: 12GiB
    wire_bytes: 4GiB
    host: {memory: 100TiB, baseline: 69GiB, devices: 1}
matrix:
  - name: slow
    axes:
      pipeline.strategy: [release, hold]
      pipeline.partition_workers: {from: 1, to: 40, step: 1}
      pipeline.channel_capacity: {from: 1, to: 25, step: 1}
`

// interruptBound is how soon an interrupted simulation must have stopped.
// The whole slowScenario takes the simulator 23 s on an idle 2-core host
// (longer on a loaded one), so 5 s still tells "at once" from "at the
// end"; stopping is microseconds of work (the command stops waiting for
// the simulation and returns), far inside 5 s at a load of 10 on 2 cores.
const interruptBound = 5 * time.Second

// Item 13 of issue 20: plain simulate and simulate --search stop with
// exit 130 when interrupted, at once, and write nothing: interrupted
// before they start, and once they are at work (their first look at the
// context, past the flags and the files).
func TestSimulateInterrupted(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "slow.yaml", slowScenario)
	for _, args := range [][]string{
		{"simulate", scen, "-o", filepath.Join(dir, "plain")},
		{"simulate", scen, "--search", "-o", filepath.Join(dir, "search"), "--best-scenario", filepath.Join(dir, "best.yaml")},
	} {
		for _, when := range []string{"before", "at work"} {
			ctx, cancel := context.WithCancel(context.Background())
			watched := &watchedCtx{Context: ctx, looked: make(chan struct{})}
			if when == "before" {
				cancel()
			}
			done := make(chan int)
			go func() { done <- execute(watched, args) }()
			if when == "at work" {
				select {
				case <-watched.looked:
				case code := <-done:
					t.Fatalf("%v ended (exit %d) before it looked at its context", args[2:], code)
				}
				cancel()
			}
			select {
			case code := <-done:
				if code != exitInterrupted {
					t.Errorf("%v interrupted %s: exit %d, want %d", args[2:], when, code, exitInterrupted)
				}
			case <-time.After(interruptBound):
				t.Fatalf("%v interrupted %s: still running %v later", args[2:], when, interruptBound)
			}
			cancel()
			entries, _ := os.ReadDir(filepath.Join(dir, filepath.Base(args[len(args)-1])))
			if _, err := os.Stat(filepath.Join(dir, "best.yaml")); err == nil || len(entries) > 0 {
				t.Errorf("%v interrupted %s wrote %v", args[2:], when, entries)
			}
		}
	}
}

// watchedCtx is a context that says (closes looked) when the code it was
// given to first asks whether it is done.
type watchedCtx struct {
	context.Context
	once   sync.Once
	looked chan struct{}
}

func (c *watchedCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.looked) })
	return c.Context.Done()
}

func (c *watchedCtx) Err() error {
	c.once.Do(func() { close(c.looked) })
	return c.Context.Err()
}

// The same with a real SIGINT to the process, as main handles it, sent
// once the process says it catches SIGINT (before, SIGINT's default action
// would kill it, not the handler under test).
func TestSimulateExitsAtSIGINT(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "slow.yaml", slowScenario)
	for _, mode := range []string{"plain", "search"} {
		args := []string{"simulate", scen, "-o", filepath.Join(dir, mode)}
		if mode == "search" {
			args = append(args, "--search")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), signalsEnv+"=1")
		pipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		caught := make(chan struct{})
		stderr := make(chan string, 1)
		go func() {
			var all strings.Builder
			sc := bufio.NewScanner(pipe)
			for sc.Scan() {
				all.WriteString(sc.Text() + "\n")
				if sc.Text() == signalsCaughtLine {
					close(caught)
				}
			}
			stderr <- all.String()
		}()
		waited := make(chan error, 1)
		select {
		case <-caught:
		case s := <-stderr: // the process closed stderr: it ended
			_ = cmd.Wait()
			t.Fatalf("%s: ended before catching signals: %s", mode, s)
		}
		sent := time.Now()
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		var errOut string
		go func() { errOut = <-stderr; waited <- cmd.Wait() }()
		select {
		case <-waited:
		case <-time.After(interruptBound):
			_ = cmd.Process.Kill()
			<-waited
			t.Fatalf("%s: still running %v after SIGINT", mode, interruptBound)
		}
		took := time.Since(sent)
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Errorf("%s: exit %d %v after SIGINT, want %d; stderr %s", mode, code, took, exitInterrupted, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, mode)); !os.IsNotExist(err) {
			t.Errorf("%s: the interrupted simulation wrote its folder", mode)
		}
	}
}

// Simulated results reach their folder whole or not at all: nothing of
// the staging folder is left, and an interrupted write leaves no folder.
func TestWriteSimulatedWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	doc := &results.Run{Schema: results.SchemaVersion, Tool: "provebench", Complete: true, Simulated: &results.Simulation{}, Scenarios: []results.Scenario{}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	never := filepath.Join(dir, "never")
	if _, err := writeSimulated(ctx, doc, never, results.FormatGzip, false); err == nil {
		t.Error("an interrupted write succeeded")
	}
	if _, err := os.Stat(never); !os.IsNotExist(err) {
		t.Errorf("an interrupted write left its folder: %v", err)
	}
	out := filepath.Join(dir, "out")
	written, err := writeSimulated(context.Background(), doc, out, results.FormatGzip, false)
	if err != nil || len(written) != 3 {
		t.Fatalf("%v %v", written, err)
	}
	var names []string
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{".provebench-files", "results.bench", "results.csv", "results.json.gz"}; !slices.Equal(names, want) {
		t.Errorf("the folder holds %v, want %v", names, want)
	}
}
