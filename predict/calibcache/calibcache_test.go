package calibcache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
)

// fixture is a real calibration run: 2^10 and 2^12 on the CPU backend
// (docs/results/cpu-simulate/calibrate at commit 3734684, kept here so that
// regenerating the committed results does not change the tests).
const fixture = "testdata/calibration-cpu.json"

func readFixture(t *testing.T) *results.Run {
	t.Helper()
	doc, err := results.Read(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestStoreKeepsTheNewestAndReadsBack(t *testing.T) {
	c := Cache{Dir: t.TempDir(), Keep: 3}
	doc := readFixture(t)
	start := doc.StartedAt
	var all []string
	for i := range 5 {
		doc.StartedAt = start.Add(time.Duration(i) * time.Hour)
		written, err := c.Store(doc)
		if err != nil || len(written) != 1 {
			t.Fatalf("store %d: %v, %v", i, written, err)
		}
		all = append(all, written[0])
	}
	files, err := c.Files(doc.Environment, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(files, "\n") != strings.Join(all[2:], "\n") {
		t.Fatalf("kept %v, want the newest three %v", files, all[2:])
	}
	entries, err := os.ReadDir(filepath.Dir(files[0]))
	if err != nil || len(entries) != 3 {
		t.Fatalf("the folder holds %d entries (%v), want 3 and no temporary file", len(entries), err)
	}
	back, err := results.Read(files[2])
	if err != nil {
		t.Fatalf("a cached document does not read back: %v", err)
	}
	if len(back.Scenarios) != len(doc.Scenarios) || !back.StartedAt.Equal(doc.StartedAt) {
		t.Fatalf("read back %d scenarios started %s, want %d started %s", len(back.Scenarios), back.StartedAt, len(doc.Scenarios), doc.StartedAt)
	}
	if other, _ := c.Files(doc.Environment, "cuda"); len(other) != 0 {
		t.Fatalf("files of a backend never stored: %v", other)
	}
	env := doc.Environment
	env.MemoryBytes *= 2
	if other, _ := c.Files(env, "cpu"); len(other) != 0 {
		t.Fatalf("a host of the same name with other memory sees %v", other)
	}
}

func TestStoreSkipsWhatACalibrationCannotRead(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	doc := readFixture(t)

	sim := *doc
	sim.Simulated = &results.Simulation{}
	if written, err := c.Store(&sim); err != nil || len(written) != 0 {
		t.Fatalf("a simulated document was stored: %v, %v", written, err)
	}

	// One scenario per kind: exec, nothing measured, another backend.
	mixed := *doc
	mixed.Scenarios = append([]results.Scenario(nil), doc.Scenarios...)
	mixed.Scenarios[0].Driver, mixed.Scenarios[0].Backend = "exec", "exec"
	for i := range mixed.Scenarios[1].Repetitions {
		mixed.Scenarios[1].Repetitions[i].Warmup = true
	}
	mixed.Scenarios[2].Backend = "cuda"
	written, err := c.Store(&mixed)
	if err != nil || len(written) != 2 {
		t.Fatalf("store: %v, %v; want one document per backend", written, err)
	}
	counts := map[string]int{}
	for _, p := range written {
		back, err := results.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range back.Scenarios {
			counts[sc.Backend]++
		}
	}
	if counts["cpu"] != len(doc.Scenarios)-3 || counts["cuda"] != 1 || counts["exec"] != 0 {
		t.Fatalf("scenarios cached per backend: %v", counts)
	}
}

func TestFilesSkipsOtherSchemas(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	doc := readFixture(t)
	written, err := c.Store(doc)
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(filepath.Dir(written[0]), "20000101T000000Z-v0-00000000.json")
	if err := os.WriteFile(old, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := c.Files(doc.Environment, "cpu")
	if err != nil || len(files) != 1 || files[0] != written[0] {
		t.Fatalf("files %v, %v; want only %s", files, err, written[0])
	}
}

func TestHostKeyIsAPathElement(t *testing.T) {
	for _, host := range []string{"", "..", ".hidden", "a/b", "node-7.example.org"} {
		k := HostKey(results.Environment{Hostname: host, CPUModel: "x", MemoryBytes: 1})
		if k != filepath.Base(k) || strings.HasPrefix(k, ".") || strings.ContainsAny(k, "/\\") {
			t.Errorf("host %q: key %q is not one safe path element", host, k)
		}
	}
	if _, err := (Cache{Dir: t.TempDir()}).Files(results.Environment{}, "../x"); err == nil {
		t.Error("a backend that is a path was accepted")
	}
}

// TestStoresCompressedAndReadsPlain: the cache writes gzip documents of
// the current schema and still lists, and reads, the plain schema-1 .json
// ones earlier versions wrote.
func TestStoresCompressedAndReadsPlain(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	doc := readFixture(t)
	written, err := c.Store(doc)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(written[0])
	if err != nil || !results.IsGzip(data) || !strings.HasSuffix(written[0], ".json.gz") {
		t.Fatalf("stored %s (gzip %v, %v), want a .json.gz gzip document", written[0], results.IsGzip(data), err)
	}
	plain, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	// A schema-1 document, plain, as earlier versions cached it.
	old := filepath.Join(filepath.Dir(written[0]), "20000101T000000Z-v1-00000000.json")
	if err := os.WriteFile(old, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := c.Files(doc.Environment, "cpu")
	if err != nil || len(files) != 2 || files[0] != old {
		t.Fatalf("files %v, %v; want the plain one first, then %s", files, err, written[0])
	}
	for _, f := range files {
		if _, err := results.Read(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestAnotherFilesRunsDoNotPushOutACalibration: nine runs of one small
// file after the quickstart's keep the quickstart's run (the newest of
// its set of configurations), and the cache holds at most twice Keep.
func TestAnotherFilesRunsDoNotPushOutACalibration(t *testing.T) {
	c := Cache{Dir: t.TempDir(), Keep: 3}
	quick := readFixture(t)
	small := readFixture(t)
	small.Scenarios = small.Scenarios[:1]
	start := quick.StartedAt
	written, err := c.Store(quick)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		small.StartedAt = start.Add(time.Duration(i+1) * time.Hour)
		if _, err := c.Store(small); err != nil {
			t.Fatal(err)
		}
	}
	files, err := c.Files(quick.Environment, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 || files[0] != written[0] {
		t.Fatalf("kept %v: want the quickstart's %s and the newest 3 small runs", files, written[0])
	}
	// Names of many sets: the newest 3, and the newest of 3 other sets.
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("20261204T%02d0000Z-v2-s%08x-abcd.json.gz", i, i))
	}
	names = append(names, "20261204T130000Z-v2-abcd.json.gz") // an earlier version's name
	if got := len(names) - len(pruned(names, 3)); got != 6 {
		t.Errorf("kept %d of %d names of 13 sets, want 6 (twice Keep)", got, len(names))
	}
}
