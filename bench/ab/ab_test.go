package ab

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provebench/provebench/bench/results"
)

func TestOrderIsABBA(t *testing.T) {
	a, b := &side{Side: Side{Name: "base"}}, &side{Side: Side{Name: "new"}}
	var got []string
	for i := 1; i <= 4; i++ {
		for _, s := range order([2]*side{a, b}, i) {
			got = append(got, s.Name)
		}
	}
	if want := "base new new base base new new base"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

func TestARunWithoutResultsIsACrash(t *testing.T) {
	rep, run := readRepetition(filepath.Join(t.TempDir(), "results.json"), errors.New("signal: killed"), []byte("fatal error: out of memory\n"))
	if run != nil || rep.Status != results.StatusCrashed {
		t.Fatalf("status %s, run %v; want crashed, no run", rep.Status, run)
	}
	for _, want := range []string{"signal: killed", "out of memory"} {
		if !strings.Contains(rep.Error, want) {
			t.Errorf("error %q lacks %q", rep.Error, want)
		}
	}
}

func TestAddKeepsTheFirstRecord(t *testing.T) {
	s := &side{doc: &results.Run{}}
	s.add("hold", nil, results.Repetition{Index: 1, Warmup: true, Status: results.StatusCrashed})
	run := &results.Run{ToolVersion: "v1", Environment: results.Environment{CPUs: 2},
		Scenarios: []results.Scenario{{Name: "hold", Strategy: "hold", Spec: []byte(`{}`)}}}
	s.add("hold", run, results.Repetition{Index: 1, Status: results.StatusOK, Verifiable: true})
	if len(s.doc.Scenarios) != 1 {
		t.Fatalf("%d scenarios", len(s.doc.Scenarios))
	}
	sc := s.doc.Scenarios[0]
	if sc.Strategy != "hold" || len(sc.Repetitions) != 2 || !sc.Verifiable || s.doc.ToolVersion != "v1" || s.doc.Environment.CPUs != 2 {
		t.Errorf("record %+v, doc version %q", sc, s.doc.ToolVersion)
	}
}
