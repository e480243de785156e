//go:build linux

package exec

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Issue 20 item 8: what the driver keeps of an output line is bounded: a
// 64 MiB line without a newline costs it a buffer, not the line.
func TestExecLineBounded(t *testing.T) {
	x, err := newExecRun(&Spec{}, &ExecSpec{Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	long := io.MultiReader(strings.NewReader("TIMELINE,0,SYNTH_START,1,p\n"), io.LimitReader(zeros{}, 64<<20),
		strings.NewReader("\nTIMELINE,3,SYNTH_END,1,p\n"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	x.readLines(long, x.stderr)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("reading a 64 MiB line allocated %d MiB", grew>>20)
	}
	if r := x.rejections(); r.N != 1 || !strings.Contains(r.First, "longer than 64 KiB") {
		t.Errorf("rejections %+v, want the long line", r)
	}
	if span, _ := x.tl.Span(); span != 3*time.Millisecond {
		t.Errorf("span %s: the lines around the long one were not read", span)
	}
}

// zeros reads as endless 'a's.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// Issue 32 item 13: exec.files neither writes through a link that already
// lies inside -o (the file itself, or a folder of its path) nor makes the
// configuration's folder through one. CheckPaths refuses them before
// the run; a link planted after it fails the configuration at its write.
func TestExecFilesStayInsideTheOutput(t *testing.T) {
	base := t.TempDir()
	away, victim := outside(t, base)
	out := filepath.Join(base, "out")
	spec := Spec{Name: "linked", Exec: &ExecSpec{Command: []string{"true"}, Files: []ExecFile{{Path: "conf", Content: "overwritten"}}}}
	d := &Driver{OutDir: out}
	data, err := d.data(&spec, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(data.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckPaths([]Spec{spec}, out); err != nil {
		t.Fatalf("no link yet: %v", err)
	}
	conf := filepath.Join(data.Dir, "conf")
	if err := os.Symlink(victim, conf); err != nil {
		t.Fatal(err)
	}
	if err := CheckPaths([]Spec{spec}, out); err == nil || !strings.Contains(err.Error(), conf) {
		t.Errorf("CheckPaths with %s linked out of -o: %v, want a refusal naming it", conf, err)
	}
	if err := writeFiles([]ExecFile{{Path: "conf", Content: "overwritten"}}, data.Dir, data.OutDir); err == nil {
		t.Error("writeFiles wrote through a link out of -o")
	}
	intact(t, victim)

	// The configuration's folder a link out of -o: refused by the check,
	// and the driver makes nothing there.
	if err := os.RemoveAll(filepath.Join(out, "exec")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(away, filepath.Join(out, "exec")); err != nil {
		t.Fatal(err)
	}
	if err := CheckPaths([]Spec{spec}, out); err == nil {
		t.Error("CheckPaths with exec/ linked out of -o: no refusal")
	}
	if err := makeConfigDir(data.Dir, data.OutDir); err == nil {
		t.Error("makeConfigDir made the configuration's folder through a link out of -o")
	}
	if err := writeFiles([]ExecFile{{Path: "victim", Content: "overwritten"}}, data.Dir, data.OutDir); err == nil {
		t.Error("writeFiles wrote through a folder linked out of -o")
	}
	intact(t, victim)
	if entries, _ := os.ReadDir(away); len(entries) != 1 {
		t.Errorf("%s holds %d entries, want the victim alone", away, len(entries))
	}
}

// Issue 20 item 3: configurations whose names differ only by case,
// accents or punctuation get exec directories of their own.
func TestConfigDirPerConfiguration(t *testing.T) {
	d := &Driver{OutDir: "out"}
	for _, pair := range [][2]string{{"Hold", "hold"}, {"x=café", "x=cafè"}, {"x=a b", "x=a-b"}} {
		if a, b := d.configDir(&Spec{Name: pair[0]}), d.configDir(&Spec{Name: pair[1]}); a == b {
			t.Errorf("%q and %q share the exec directory %s", pair[0], pair[1], a)
		}
	}
}

// outside makes a folder beside -o holding a file "victim" that holds
// "precious".
func outside(t *testing.T, base string) (dir, file string) {
	t.Helper()
	dir = filepath.Join(base, "elsewhere")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "victim")
	if err := os.WriteFile(file, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

// intact fails the test unless file still holds "precious".
func intact(t *testing.T, file string) {
	t.Helper()
	if data, err := os.ReadFile(file); err != nil || string(data) != "precious" {
		t.Errorf("%s outside -o: %q, %v; want it untouched", file, data, err)
	}
}
