package results_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/provebench/provebench/results"
)

// folderNames lists the names in dir, sorted.
func folderNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// folderFixture is writerFixture as a valid document: the failed
// repetition's seconds per proof (20/0) left absent, as JSON holds no
// infinity, and GPU utilisation a fraction.
func folderFixture() *results.Run {
	run := writerFixture()
	for i := range run.Scenarios {
		for j := range run.Scenarios[i].Repetitions {
			r := &run.Scenarios[i].Repetitions[j]
			if math.IsInf(r.SecondsPerProof, 0) {
				r.SecondsPerProof = 0
			}
			if u := r.MeanGPUUtilization; u != nil && *u > 1 {
				*u /= 100
			}
		}
	}
	return run
}

// Write leaves the folder's set of results files, in the chosen format
// only, and the manifest lists what every command wrote there and nothing
// outside it.
func TestFolderWrite(t *testing.T) {
	dir := t.TempDir()
	run := folderFixture()
	stale := filepath.Join(dir, "results.json.gz")
	if err := results.WriteFormat(stale, run, results.FormatGzip); err != nil {
		t.Fatal(err)
	}
	f := results.Folder{Dir: dir, Format: results.FormatJSON}
	written, err := f.Write(run)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "results.json"), filepath.Join(dir, "results.csv"), filepath.Join(dir, "results.bench")}
	if !slices.Equal(written, want) {
		t.Errorf("written %v, want %v", written, want)
	}
	if got := folderNames(t, dir); !slices.Equal(got, []string{"results.bench", "results.csv", "results.json"}) {
		t.Errorf("folder holds %v: the stale results.json.gz stayed, or a file is missing", got)
	}
	if p, err := results.Find(dir); err != nil || p != want[0] {
		t.Errorf("Find: %q, %v", p, err)
	}
	back, err := results.Read(want[0])
	if err != nil || len(back.Scenarios) != len(run.Scenarios) || len(back.Scenarios) == 0 {
		t.Fatalf("read back: %v", err)
	}

	// An earlier command's manifest: its files still there stay listed,
	// those gone and those outside the folder do not.
	report := filepath.Join(dir, "report.md")
	if err := os.WriteFile(report, []byte("# report"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.ManifestName), []byte("report.md\ngone.png\n../outside.txt\n/etc/passwd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteManifest(append(written, filepath.Join(t.TempDir(), "cache.json"))); err != nil {
		t.Fatal(err)
	}
	listed, err := f.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"report.md", "results.json", "results.csv", "results.bench"}; !slices.Equal(listed, want) {
		t.Errorf("manifest %v, want %v", listed, want)
	}
	if listed, err := (results.Folder{Dir: t.TempDir()}).Manifest(); err != nil || len(listed) != 0 {
		t.Errorf("a folder without a manifest lists %v, %v", listed, err)
	}
}

// A simulated document's CSV and benchmark lines say they are predictions;
// a measured one's are as they were.
func TestTablesMarkSimulated(t *testing.T) {
	for _, simulated := range []bool{false, true} {
		run := folderFixture()
		if simulated {
			run.Simulated = &results.Simulation{Calibration: []string{"cal/results.json.gz"}}
		}
		dir := t.TempDir()
		if _, err := (results.Folder{Dir: dir}).Write(run); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, results.CSVName))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("simulated %v: %d CSV rows, %v", simulated, len(rows), err)
		}
		if got := rows[0][0] == "simulated"; got != simulated {
			t.Errorf("simulated %v: CSV header starts %v", simulated, rows[0][:2])
		}
		for _, r := range rows[1:] {
			if len(r) != len(rows[0]) || (simulated && r[0] != "true") {
				t.Errorf("simulated %v: row %v", simulated, r[:2])
			}
		}

		bench, err := os.Open(filepath.Join(dir, results.BenchfmtName))
		if err != nil {
			t.Fatal(err)
		}
		rd := benchfmt.NewReader(bench, results.BenchfmtName)
		lines := 0
		for rd.Scan() {
			res, ok := rd.Result().(*benchfmt.Result)
			if !ok {
				continue
			}
			lines++
			want := ""
			if simulated {
				want = "true"
			}
			if got := res.GetConfig("simulated"); got != want {
				t.Errorf("simulated %v: %s's configuration says simulated %q", simulated, res.Name, got)
			}
		}
		bench.Close()
		if err := rd.Err(); err != nil || lines == 0 {
			t.Errorf("simulated %v: %d benchmark lines, %v", simulated, lines, err)
		}
	}
}
