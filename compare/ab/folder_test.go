package ab

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// A side's run is read back from its folder as every command reads one: a
// base binary from before compressed documents writes results.json, a
// newer one results.json.gz, and a folder holding both is a crash that
// names them rather than a guess.
func TestReadBackFindsEitherFormat(t *testing.T) {
	doc := &results.Run{Schema: results.SchemaVersion, Tool: "provebench", ToolVersion: "v1",
		Scenarios: []results.Scenario{{Name: "hold", Spec: []byte(`{}`), Repetitions: []results.Repetition{{Index: 1, Status: results.StatusOK, SecondsPerProof: 2}}}}}
	write := func(dir string, f results.Format) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.WriteFormat(filepath.Join(dir, f.FileName()), doc, f); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	for _, f := range results.Formats {
		dir := filepath.Join(root, string(f))
		write(dir, f)
		rep, run := readRepetition(dir, nil, nil)
		if run == nil || rep.Status != results.StatusOK || rep.SecondsPerProof != 2 || run.ToolVersion != "v1" {
			t.Errorf("%s: status %s (%s), run %v", f, rep.Status, rep.Error, run)
		}
	}
	both := filepath.Join(root, "both")
	write(both, results.FormatJSON)
	write(both, results.FormatGzip)
	rep, run := readRepetition(both, nil, []byte("done\n"))
	if run != nil || rep.Status != results.StatusCrashed || !strings.Contains(rep.Error, filepath.Join(both, "results.json.gz")) || !strings.Contains(rep.Error, filepath.Join(both, "results.json")) {
		t.Errorf("both formats: status %s, error %q, run %v; want a crash naming both", rep.Status, rep.Error, run)
	}
}

// Each side's folder is an output folder like any command's: the
// document, results.csv and results.bench, the document in the chosen
// format only.
func TestSidesWriteOutputFolders(t *testing.T) {
	r, _ := newFake(t, func(int) float64 { return 1 }, func(int) float64 { return 1 })
	r.Format = results.FormatJSON
	stale := filepath.Join(r.OutDir, "base", "results.json.gz")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("an older run"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Run(context.Background(), []Config{{Name: "c", Pairs: 2}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"base", "new"} {
		dir := filepath.Join(r.OutDir, name)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := []string{"results.bench", "results.csv", "results.json"}; !slices.Equal(names, want) {
			t.Errorf("%s holds %v, want %v", name, names, want)
		}
		doc, err := readDocument(dir)
		if err != nil || len(doc.Scenarios) != 1 || len(doc.Scenarios[0].Repetitions) != 2 {
			t.Errorf("%s: read back %v", name, err)
		}
	}
}
