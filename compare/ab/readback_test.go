package ab

import (
	"os"
	"path/filepath"
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
