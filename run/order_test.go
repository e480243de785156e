package run

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
)

// stepNames writes an order as "a w1" (warm-up 1 of a), "a r2" (measured
// repetition 2 of a), from 1 as progress lines number them.
func stepNames(specs []Spec, order []step) []string {
	var out []string
	for _, st := range order {
		kind := "r"
		if st.warmup {
			kind = "w"
		}
		out = append(out, fmt.Sprintf("%s %s%d", specs[st.config].Name, kind, st.index+1))
	}
	return out
}

func orderSpecs() []Spec {
	a, b, c := smallSpec("a", config.Hold), smallSpec("b", config.Hold), smallSpec("c", config.Hold)
	a.Warmups, a.Repeats = 1, 3
	b.Warmups, b.Repeats = 0, 1
	c.Warmups, c.Repeats = 2, 2
	return []Spec{a, b, c}
}

func TestRunOrderInterleaved(t *testing.T) {
	specs := orderSpecs()
	got := stepNames(specs, runOrder(specs, true))
	// Round 1 with each configuration's warm-ups right before its first
	// measured repetition; b, with one repeat, drops out of round 2, c
	// out of round 3.
	want := []string{
		"a w1", "a r1", "b r1", "c w1", "c w2", "c r1",
		"a r2", "c r2",
		"a r3",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("interleaved order:\n got %v\nwant %v", got, want)
	}
}

func TestRunOrderSequential(t *testing.T) {
	specs := orderSpecs()
	got := stepNames(specs, runOrder(specs, false))
	want := []string{"a w1", "a r1", "a r2", "a r3", "b r1", "c w1", "c w2", "c r1", "c r2"}
	if !slices.Equal(got, want) {
		t.Fatalf("sequential order:\n got %v\nwant %v", got, want)
	}
}

// Warm-ups of a configuration without measured repetitions still run.
func TestRunOrderWarmupsOnly(t *testing.T) {
	specs := orderSpecs()[:1]
	specs[0].Warmups, specs[0].Repeats = 2, 0
	if got := stepNames(specs, runOrder(specs, true)); !slices.Equal(got, []string{"a w1", "a w2"}) {
		t.Fatalf("order %v", got)
	}
}

// Interleaved, each configuration's remaining repetitions are estimated at
// its own mean, whichever ran last.
func TestProgressTimeLeftInterleaved(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	p := NewProgress(&b, false).(*lineProgress)
	p.now = func() time.Time { return clock }
	fast, slow := smallSpec("fast", config.Hold), smallSpec("slow", config.Hold)
	fast.Warmups, fast.Repeats, slow.Warmups, slow.Repeats = 0, 3, 0, 3
	p.Begin(2, 6)
	step := func(spec *Spec, idx int, d time.Duration) {
		p.RepetitionStart(spec, idx, false)
		clock = clock.Add(d)
		p.RepetitionEnd(spec, &results.Repetition{Index: idx + 1, Status: results.StatusOK})
	}
	step(&fast, 0, 2*time.Second)  // fast: 2 at 2 s; slow unseen: 3 at 2 s
	step(&slow, 0, 10*time.Second) // fast: 2 at 2 s, slow: 2 at 10 s
	step(&fast, 1, 2*time.Second)  // fast: 1 at 2 s, slow: 2 at 10 s
	step(&slow, 1, 10*time.Second) // 2 + 10
	step(&fast, 2, 2*time.Second)  // 10
	step(&slow, 2, 10*time.Second) // done
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{"(~10s left)", "(~24s left)", "(~22s left)", "(~12s left)", "(~10s left)", ""}
	for i, w := range want {
		l := lines[i+1]
		if (w == "" && strings.Contains(l, "left")) || !strings.Contains(l, w) {
			t.Errorf("line %d: %q, want %q", i+1, l, w)
		}
	}
}

// tinySpecs are release and hold on a 2^6 circuit, repeats each.
func tinySpecs(repeats int) []Spec {
	var specs []Spec
	for _, strategy := range []config.Strategy{config.Release, config.Hold} {
		s := smallSpec(string(strategy), strategy)
		s.Workload.Constraints, s.Workload.Partitions, s.Workload.Proofs = 1<<6, 2, 1
		s.Warmups, s.Repeats = 0, repeats
		specs = append(specs, s)
	}
	return specs
}

// orderProbe records which repetition starts when, and what results.json
// holds at that moment.
type orderProbe struct {
	nopProgress
	path   string
	starts []string
	onDisk [][]string // per start: each scenario's name and repetition count
}

func (o *orderProbe) RepetitionStart(spec *Spec, idx int, warmup bool) {
	o.starts = append(o.starts, fmt.Sprintf("%s %d %v", spec.Name, idx+1, warmup))
	doc, err := results.Read(o.path)
	var seen []string
	if err == nil {
		for _, sc := range doc.Scenarios {
			seen = append(seen, fmt.Sprintf("%s:%d", sc.Name, len(sc.Repetitions)))
		}
	}
	o.onDisk = append(o.onDisk, seen)
}

// Through the real runner: two configurations of a tiny circuit, two
// repeats each, interleaved.
func TestRunInterleaved(t *testing.T) {
	r := newTestRunner(t)
	r.Interleave = true
	probe := &orderProbe{path: r.ResultsPath()}
	r.Progress = probe
	doc, err := r.Run(context.Background(), tinySpecs(2))
	if err != nil {
		t.Fatal(err)
	}
	wantStarts := []string{"release 1 false", "hold 1 false", "release 2 false", "hold 2 false"}
	if !slices.Equal(probe.starts, wantStarts) {
		t.Fatalf("ran %v, want %v", probe.starts, wantStarts)
	}
	// Rewritten after every repetition, in declared order: before
	// release's second repetition both first ones are on disk.
	if got := probe.onDisk[2]; !slices.Equal(got, []string{"release:1", "hold:1"}) {
		t.Fatalf("results.json before the second round: %v", got)
	}
	onDisk, err := results.Read(probe.path)
	if err != nil {
		t.Fatal(err)
	}
	if !onDisk.Complete || onDisk.RunOrder != results.RunOrderInterleaved || doc.RunOrder != results.RunOrderInterleaved {
		t.Fatalf("complete %v, run_order %q", onDisk.Complete, onDisk.RunOrder)
	}
	if len(onDisk.Scenarios) != 2 || onDisk.Scenarios[0].Name != "release" || onDisk.Scenarios[1].Name != "hold" {
		t.Fatalf("scenarios %d, not in declared order", len(onDisk.Scenarios))
	}
	for _, sc := range onDisk.Scenarios {
		if len(sc.Repetitions) != 2 {
			t.Fatalf("%s: %d repetitions", sc.Name, len(sc.Repetitions))
		}
		for i, rep := range sc.Repetitions {
			if rep.Status != results.StatusOK || rep.Index != i+1 || rep.Warmup || rep.Partitions != 2 {
				t.Errorf("%s rep %d: %s %s, index %d, %d partitions", sc.Name, i, rep.Status, rep.Error, rep.Index, rep.Partitions)
			}
		}
	}
	// The clock agrees: hold's first repetition started between
	// release's two.
	rel, hold := onDisk.Scenarios[0].Repetitions, onDisk.Scenarios[1].Repetitions
	if !rel[0].StartedAt.Before(hold[0].StartedAt) || !hold[0].StartedAt.Before(rel[1].StartedAt) || !rel[1].StartedAt.Before(hold[1].StartedAt) {
		t.Errorf("start times not interleaved: release %v %v, hold %v %v", rel[0].StartedAt, rel[1].StartedAt, hold[0].StartedAt, hold[1].StartedAt)
	}
}

// An interleaved run stopped after three repetitions keeps them, in
// declared order: release's first two rounds and hold's first.
func TestInterleavedInterruptKeepsFinished(t *testing.T) {
	r := newTestRunner(t)
	r.Interleave = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.Progress = &cancelAfter{n: 3, cancel: cancel}
	if _, err := r.Run(ctx, tinySpecs(3)); err == nil {
		t.Fatal("an interrupted run returned no error")
	}
	doc, err := results.Read(r.ResultsPath())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sc := range doc.Scenarios {
		for _, rep := range sc.Repetitions {
			got = append(got, fmt.Sprintf("%s %d %s", sc.Name, rep.Index, rep.Status))
		}
	}
	want := []string{"release 1 ok", "release 2 ok", "hold 1 ok"}
	if doc.Complete || doc.RunOrder != results.RunOrderInterleaved || !slices.Equal(got, want) {
		t.Fatalf("complete %v, run order %q, repetitions %v, want %v", doc.Complete, doc.RunOrder, got, want)
	}
}
