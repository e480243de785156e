package ab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

// aloneSides is a double of two warm sides whose repetitions measure peak
// bytes of RSS on a host of host bytes: it records the calls and fails a
// call made while the other side's process is still up.
type aloneSides struct {
	t          *testing.T
	peak, host uint64
	sides      [2]*side
	calls      []string
}

func (a *aloneSides) runOne(_ context.Context, s *side, config string, index int, warm bool) (results.Repetition, *results.Run, error) {
	for _, o := range a.sides {
		if o != s && o.warmFor == config && a.peak*2 > a.host {
			a.t.Errorf("%s/%d ran while the %s side was still warm", s.Name, index, o.Name)
		}
	}
	call := fmt.Sprintf("%s/%d", s.Name, index)
	if warm {
		call = s.Name + "/w"
	}
	a.calls = append(a.calls, call)
	run := &results.Run{Environment: results.Environment{CPUs: 2, CPUModel: "x", MemoryBytes: a.host},
		Scenarios: []results.Scenario{{Name: config, Backend: "cpu", Spec: []byte(`{}`)}}}
	return results.Repetition{Status: results.StatusOK, SecondsPerProof: 1, PartitionsPerSecond: 1,
		PeakRSSBytes: a.peak, Proofs: 1, Partitions: 1}, run, nil
}

func newAlone(t *testing.T, peak, host uint64) (*Runner, *aloneSides) {
	a := &aloneSides{t: t, peak: peak, host: host}
	r := &Runner{Base: Side{Name: "base"}, New: Side{Name: "new"}, OutDir: t.TempDir(), runOne: a.runOne, HostMemory: host}
	a.sides = [2]*side{{Side: r.Base, serve: true, doc: &results.Run{}}, {Side: r.New, serve: true, doc: &results.Run{}}}
	for _, s := range a.sides {
		s.dir = filepath.Join(r.OutDir, s.Name)
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return r, a
}

// TestTwoSidesThatDoNotFitRunOneAtATime: where the estimate says two warm
// sides may not fit, the base side warms up alone; when its measured peak,
// twice, is past the host's memory, the pairs run in ABBA blocks with one
// side's process up at a time, each side warmed as its process starts.
func TestTwoSidesThatDoNotFitRunOneAtATime(t *testing.T) {
	const gib = 1 << 30
	r, a := newAlone(t, 76*gib, 125*gib)
	cfg := Config{Name: "big", Pairs: 4, Warmups: 1, PeakRSS: 80 * gib}
	if err := r.warmups(context.Background(), a.sides, cfg); err != nil {
		t.Fatal(err)
	}
	if err := r.pairs(context.Background(), a.sides, cfg, 1, cfg.Pairs, cfg.Pairs, time.Time{}); err != nil {
		t.Fatal(err)
	}
	want := "base/w base/1 base/2 new/w new/1 new/2 new/3 new/4 base/w base/3 base/4"
	if got := strings.Join(a.calls, " "); got != want {
		t.Errorf("ran %s\nwant %s", got, want)
	}
	notes := r.Notes(nil, nil)
	if len(notes) != 1 || !strings.Contains(notes[0], "one side warm at a time") || !strings.Contains(notes[0], "base 2, new 1") {
		t.Errorf("notes %q: want the configuration, why and the processes started (base 2, new 1)", notes)
	}
	// --until-resolved adds 4 pairs at a time: two switches of side.
	if n := r.roundPairs("big"); n != 4 {
		t.Errorf("rounds of %d pairs, want 4", n)
	}
}

// TestAPessimisticEstimateYieldsToTheMeasurement: the estimate said two
// may not fit, the base's first warm-up measured that they do: the new
// side warms up beside it and the pairs run ABBA as usual.
func TestAPessimisticEstimateYieldsToTheMeasurement(t *testing.T) {
	const gib = 1 << 30
	r, a := newAlone(t, 20*gib, 125*gib)
	cfg := Config{Name: "mid", Pairs: 2, Warmups: 1, PeakRSS: 80 * gib}
	if err := r.warmups(context.Background(), a.sides, cfg); err != nil {
		t.Fatal(err)
	}
	if err := r.pairs(context.Background(), a.sides, cfg, 1, cfg.Pairs, cfg.Pairs, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(a.calls, " "), "base/w new/w base/1 new/1 new/2 base/2"; got != want {
		t.Errorf("ran %s, want %s", got, want)
	}
	if notes := r.Notes(nil, nil); len(notes) != 0 {
		t.Errorf("notes %q, want none", notes)
	}
}

func TestTooBigForTwoReadsTheGPU(t *testing.T) {
	const gib = 1 << 30
	gpu := uint64(105 * gib)
	env := results.Environment{MemoryBytes: 512 * gib, GPUs: []results.GPU{{MemoryBytes: 141 * gib}}}
	rep := &results.Repetition{Status: results.StatusOK, PeakRSSBytes: 40 * gib, PeakGPUMemoryBytes: &gpu}
	if why := tooBigForTwo(0, env, rep); !strings.Contains(why, "GPU memory") {
		t.Errorf("why %q: want the GPU's memory named", why)
	}
	gpu = 50 * gib
	if why := tooBigForTwo(0, env, rep); why != "" {
		t.Errorf("two of 50 GiB on a 141 GiB GPU: %q, want fits", why)
	}
	// A memory given (ab --host-memory) is the host's, not the recorded one.
	if why := tooBigForTwo(64*gib, env, rep); !strings.Contains(why, "peak RSS") {
		t.Errorf("two of 40 GiB in 64 GiB: %q, want the host's memory named", why)
	}
}

// TestTerminalProgressIsRedrawn: on a terminal each pair's line replaces
// the last, and a configuration's last pair stays: a line per
// configuration, not one per pair; in a log every pair has its line.
func TestTerminalProgressIsRedrawn(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		r, _ := newFake(t, func(int) float64 { return 1 }, func(int) float64 { return 1 })
		var log strings.Builder
		r.Log, r.Terminal = &log, terminal
		if _, _, err := r.Run(context.Background(), []Config{{Name: "a", Pairs: 6}, {Name: "b", Pairs: 6}}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
		want := 12
		if terminal {
			want = 2
		}
		if len(lines) != want {
			t.Errorf("terminal %v: %d lines, want %d:\n%q", terminal, len(lines), want, log.String())
		}
		if terminal && (!strings.Contains(lines[0], "\r\x1b[K") || !strings.HasSuffix(lines[1], "b pair 6/6: base 1 s/proof, new 1 s/proof")) {
			t.Errorf("terminal lines %q: want each pair redrawn in place, the last of each configuration kept", lines)
		}
	}
}

// TestProcessSpreadSaysHowFarOneSidesProcessesDiffer: each process's
// median CPU time, per side, and the widest ratio; nothing where no side
// measured the configuration in two processes.
func TestProcessSpreadSaysHowFarOneSidesProcessesDiffer(t *testing.T) {
	side := func(perProcess ...[]float64) *results.Run {
		sc := results.Scenario{Name: "big26"}
		for pid, cpus := range perProcess {
			for _, v := range cpus {
				sc.Repetitions = append(sc.Repetitions, results.Repetition{Status: results.StatusOK,
					RunCPUSeconds: &v, Worker: &results.Worker{PID: 100 + pid}})
			}
			sc.Repetitions = append(sc.Repetitions, results.Repetition{Status: results.StatusOK, Warmup: true,
				RunCPUSeconds: ptr(99.0), Worker: &results.Worker{PID: 100 + pid}})
		}
		return &results.Run{Scenarios: []results.Scenario{sc}}
	}
	base := side([]float64{7.99, 7.62, 7.41}, []float64{7.99, 7.76, 8.26}, []float64{8.43, 8.64})
	cur := side([]float64{7.5, 7.75, 8.0})
	got := processSpread("big26", base, cur)
	for _, want := range []string{"cpu_seconds: base 7.620s-8.535s over 3", "up to 12.0% apart"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "new ") {
		t.Errorf("%q names the new side, which measured in one process", got)
	}
	if got := processSpread("big26", cur, cur); got != "" {
		t.Errorf("one process a side: %q, want nothing", got)
	}
	if got := processSpread("other", base, cur); got != "" {
		t.Errorf("a configuration neither side measured: %q, want nothing", got)
	}
}

func ptr[T any](v T) *T { return &v }
