package run

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
)

// TestReuseProcessServesRepetitionsWarm: with ReuseProcess 3, a
// configuration's 1 warm-up and 4 repetitions run in two workers, the first
// serving three and the second two. Only a worker's first repetition pays
// the setup; every repetition is measured alone (its own counters,
// balanced, its own peak since a reset, its own CPU time) and proves as a
// repetition in its own process does.
func TestReuseProcessServesRepetitionsWarm(t *testing.T) {
	spec := smallSpec("warm", config.Hold)
	spec.Warmups, spec.Repeats = 1, 4
	r := newTestRunner(t)
	r.ReuseProcess = 3
	doc, err := r.Run(context.Background(), []Spec{spec})
	if err != nil {
		t.Fatal(err)
	}
	reps := doc.Scenarios[0].Repetitions
	if len(reps) != 5 {
		t.Fatalf("%d repetitions, want 5", len(reps))
	}
	pids := map[int]int{}
	for i, rep := range reps {
		if rep.Status != results.StatusOK {
			t.Fatalf("repetition %d: %s %s", i, rep.Status, rep.Error)
		}
		w := rep.Worker
		if w == nil {
			t.Fatalf("repetition %d: no worker recorded", i)
		}
		pids[w.PID]++
		if wantServed := i%3 + 1; w.Served != wantServed {
			t.Errorf("repetition %d: served %d by its worker, want %d", i, w.Served, wantServed)
		}
		if (rep.SetupSeconds != nil) != (w.Served == 1) {
			t.Errorf("repetition %d (served %d): setup %v; want it on a worker's first repetition only", i, w.Served, rep.SetupSeconds)
		}
		if runtime.GOOS == "linux" && (!w.PeakReset || rep.PeakRSSSource == results.PeakFromSampled) {
			t.Errorf("repetition %d: peak reset %v, source %s: Linux resets the peak", i, w.PeakReset, rep.PeakRSSSource)
		}
		if rep.PeakRSSBytes == 0 || rep.CPUUserSeconds <= 0 || rep.RunCPUSeconds == nil || *rep.RunCPUSeconds <= 0 {
			t.Errorf("repetition %d: peak %d, cpu %v/%v: a served repetition measures its own", i, rep.PeakRSSBytes, rep.CPUUserSeconds, rep.RunCPUSeconds)
		}
		if rep.PeakCounters[pipeline.CounterPartitionsDone] != int64(spec.Workload.Partitions*spec.Workload.Proofs) {
			t.Errorf("repetition %d: partitions_done peaked at %d: the counters were not the repetition's own", i, rep.PeakCounters[pipeline.CounterPartitionsDone])
		}
		if rep.ProofsVerified != spec.Workload.Proofs {
			t.Errorf("repetition %d: %d proofs verified, want %d", i, rep.ProofsVerified, spec.Workload.Proofs)
		}
		if rep.HostLoad == nil || rep.HostLoad.OthersCPUFraction == nil {
			t.Errorf("repetition %d: no neighbours' share in %+v", i, rep.HostLoad)
		}
	}
	if len(pids) != 2 {
		t.Errorf("workers %v: want two processes, serving 3 and 2", pids)
	}
}

// TestServeAnswersEachRequest: run --serve's protocol: a reply per
// request, carrying the repetition the document holds; the end of the
// requests ends the server and completes the document.
func TestServeAnswersEachRequest(t *testing.T) {
	spec := smallSpec("served", config.Release)
	r := newTestRunner(t)
	r.ReuseProcess = 8
	var replies bytes.Buffer
	requests := strings.NewReader(`{"index":1,"warmup":true}` + "\n" + `{"index":1}` + "\n" + `{"index":2}` + "\n")
	doc, err := r.Serve(context.Background(), spec, requests, &replies)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&replies)
	var got []ServeReply
	for dec.More() {
		var rep ServeReply
		if err := dec.Decode(&rep); err != nil {
			t.Fatal(err)
		}
		got = append(got, rep)
	}
	if len(got) != 3 || !doc.Complete || len(doc.Scenarios[0].Repetitions) != 3 {
		t.Fatalf("%d replies, complete %v, %d repetitions; want 3, true, 3", len(got), doc.Complete, len(doc.Scenarios[0].Repetitions))
	}
	for i, want := range []struct {
		index  int
		warmup bool
	}{{1, true}, {1, false}, {2, false}} {
		rep := got[i].Repetition
		if got[i].Index != want.index || rep == nil || rep.Index != want.index || rep.Warmup != want.warmup || rep.Status != results.StatusOK {
			t.Errorf("reply %d: %+v, want index %d warm-up %v, ok", i, got[i], want.index, want.warmup)
			continue
		}
		if rep.Worker == nil || rep.Worker.Served != i+1 {
			t.Errorf("reply %d: worker %+v, want the %d-th repetition of one worker", i, rep.Worker, i+1)
		}
	}
	if _, err := r.Serve(context.Background(), spec, strings.NewReader("{oops\n"), &replies); err == nil || !strings.Contains(err.Error(), "bad request") {
		t.Errorf("a malformed request: %v, want a bad request", err)
	}
}
