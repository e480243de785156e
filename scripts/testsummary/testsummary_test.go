package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A module whose tests pass, log, skip (a test and a subtest, one with a
// two-line message), fail, and one package that does not compile.
var fixture = map[string]string{
	"go.mod": "module tsfix\n\ngo 1.26\n",
	"a/a_test.go": `package a

import "testing"

func TestPasses(t *testing.T) { t.Log("passing log line") }

func TestSkips(t *testing.T) { t.Skip("no device here:\nsecond line") }

func TestParent(t *testing.T) {
	t.Run("child", func(t *testing.T) { t.Skipf("child skip %d", 7) })
}

func TestFails(t *testing.T) { t.Error("failing on purpose") }
`,
	"b/b.go":      "package b\n\nvar x int = \"not an int\"\n",
	"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {}\n",
}

// goTestFixture runs `testsummary run` on go test -json over the fixture
// module and returns its exit code, its printed log and the stream file.
func goTestFixture(t *testing.T) (code int, log, file string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("these tests run go test: %v", err)
	}
	dir := t.TempDir()
	for name, text := range fixture {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("GOFLAGS", "")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	out := t.TempDir()
	file = filepath.Join(out, "fixture.json")
	var stdout, stderr bytes.Buffer
	code = run(context.Background(), []string{"run", "-json", file, "--", goBin, "test", "-json", "-count=1", "./..."}, &stdout, &stderr)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "fixture.json" {
		t.Errorf("output folder holds %v, want fixture.json alone (no temporary file left)", entries)
	}
	return code, stdout.String(), file
}

func TestRunPrintsWhatGoTestWould(t *testing.T) {
	code, log, file := goTestFixture(t)
	if code != exitFailed {
		t.Errorf("exit %d, want %d: a test failed and a package did not build", code, exitFailed)
	}
	for _, want := range []string{
		"--- FAIL: TestFails",
		"failing on purpose",
		"cannot use \"not an int\"",
		"FAIL\ttsfix/b [build failed]",
		"testsummary: fixture.json: 2 passed, 2 skipped, 1 failed",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	// A passing or skipping test's output is not printed, nor -v's PASS.
	for _, unwanted := range []string{"passing log line", "TestPasses", "no device here", "\nPASS\n"} {
		if strings.Contains(log, unwanted) {
			t.Errorf("the log has %q", unwanted)
		}
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := readStream(file, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	// TestPasses passes, and TestParent around its skipped child.
	if want := (tally{passed: 2, skipped: 2, failed: 1}); s.tally != want {
		t.Errorf("stream tally %+v, want %+v", s.tally, want)
	}
	got := map[string]string{}
	for _, sk := range s.skips {
		got[sk.test] = sk.reason
	}
	want := map[string]string{
		"TestSkips":        "a_test.go:7: no device here: second line",
		"TestParent/child": "a_test.go:10: child skip 7",
	}
	if len(got) != len(want) {
		t.Errorf("skips %v, want %v", got, want)
	}
	for test, reason := range want {
		if got[test] != reason {
			t.Errorf("%s skipped with %q, want %q", test, got[test], reason)
		}
	}
}

func TestRunWithoutEventsIsAnError(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test runs go: %v", err)
	}
	for _, tc := range []struct {
		name string
		argv []string
		code int
	}{
		// go test without -json: a suite that would look empty.
		{"no json", []string{goBin, "version"}, exitBadInput},
		// A command that fails before testing keeps its status.
		{"fails", []string{goBin, "test", "-json", "-count=x", "./..."}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			file := filepath.Join(dir, "x.json")
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"run", "-json", file, "--"}, tc.argv...), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, stdout.String(), stderr.String())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left %s behind\n%s%s", entries[0].Name(), stdout.String(), stderr.String())
			}
		})
	}
}

func TestFollowerPrintsTestsCutShort(t *testing.T) {
	var out bytes.Buffer
	f := newFollower(&out)
	for _, e := range []event{
		{Action: "run", Package: "p", Test: "TestDone"},
		{Action: "output", Package: "p", Test: "TestDone", Output: "done's log\n"},
		{Action: "pass", Package: "p", Test: "TestDone"},
		{Action: "run", Package: "p", Test: "TestHangs"},
		{Action: "output", Package: "p", Test: "TestHangs", Output: "panic: test timed out after 1s\n"},
		{Action: "output", Package: "p", Output: "FAIL\tp\t1.0s\n"},
		{Action: "fail", Package: "p"},
	} {
		f.add(e)
	}
	f.finish()
	if !f.failed() {
		t.Error("a failed package is not a failure")
	}
	if got, want := out.String(), "FAIL\tp\t1.0s\npanic: test timed out after 1s\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}

func TestSkipsReport(t *testing.T) {
	streams := []stream{{
		name:  "dir/unit.json",
		tally: tally{passed: 3, skipped: 2},
		skips: []skip{
			{stream: "unit.json", pkg: "example.com/m/gpu/cuda", test: "TestOverlap/ntt", reason: "x_test.go:4: nothing overlaps"},
			{stream: "unit.json", pkg: "example.com/m/cmd/tool", test: "TestScenario", reason: "x_test.go:9: not built"},
		},
		ran: map[testKey]bool{
			{"example.com/m/gpu/cuda", "TestOverlap"}:     true,
			{"example.com/m/gpu/cuda", "TestOverlap/ntt"}: true,
			{"example.com/m/cmd/tool", "TestScenario"}:    true,
		},
	}}
	list := "# comment\n\ngpu/cuda TestOverlap  one device, no overlap\nsnarkjs TestGone  stale\n"
	allowed, err := parseAllowed("allowed", strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) != 2 {
		t.Fatalf("%d allowances, want 2", len(allowed))
	}

	var out bytes.Buffer
	if printSkips(&out, streams, allowed) {
		t.Error("TestScenario is not allowed to skip, yet the report passed")
	}
	for _, want := range []string{
		"tests in unit.json: 3 passed, 2 skipped, 0 failed",
		"skipped: 2",
		"example.com/m/gpu/cuda TestOverlap/ntt (unit.json): x_test.go:4: nothing overlaps\n      allowed (allowed:3): one device, no overlap",
		"example.com/m/cmd/tool TestScenario (unit.json): x_test.go:9: not built\n      NOT ALLOWED",
		"note: allowed:4 allows snarkjs TestGone, which none of these streams ran",
		"FAIL: 1 test(s) skipped that CI must run: example.com/m/cmd/tool TestScenario",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}

	// Allowed, every skip passes; a stream in which nothing ran does not.
	allowed = append(allowed, allowance{file: "allowed", line: 5, pkg: "cmd/tool", test: "TestScenario", reason: "r"})
	out.Reset()
	if !printSkips(&out, streams, allowed) {
		t.Errorf("every skip allowed, yet the report failed:\n%s", out.String())
	}
	out.Reset()
	if printSkips(&out, append(streams, stream{name: "cuda.json"}), allowed) {
		t.Error("a stream that ran no test passed")
	}
	if !strings.Contains(out.String(), "no test ran in cuda.json") {
		t.Errorf("the report does not say cuda.json ran nothing:\n%s", out.String())
	}
}

func TestAllowedCovers(t *testing.T) {
	a := allowance{pkg: "gpu/cuda", test: "TestOverlap"}
	for _, tc := range []struct {
		pkg, test string
		want      bool
	}{
		{"example.com/m/gpu/cuda", "TestOverlap", true},
		{"example.com/m/gpu/cuda", "TestOverlap/ntt", true},
		{"gpu/cuda", "TestOverlap", true},
		{"example.com/m/gpu/cuda", "TestOverlapMore", false},
		{"example.com/m/gpu/notcuda", "TestOverlap", false},
		{"example.com/m/xgpu/cuda", "TestOverlap", false},
	} {
		if got := a.covers(tc.pkg, tc.test); got != tc.want {
			t.Errorf("covers(%s, %s) = %v, want %v", tc.pkg, tc.test, got, tc.want)
		}
	}
}

func TestAllowedErrorsNameLineAndField(t *testing.T) {
	for _, tc := range []struct{ list, want string }{
		{"# c\ngpu/cuda\n", "list:2: test: missing"},
		{"gpu/cuda TestX\n", "list:1: reason: missing"},
		{"gpu/cuda Overlap why\n", "list:1: test: \"Overlap\" is not a test's name"},
		{"/ TestX why\n", "list:1: package: empty"},
		{"p TestX why\n\np TestX again\n", "list:3: test: p TestX is already allowed at line 1"},
	} {
		_, err := parseAllowed("list", strings.NewReader(tc.list))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.list, err, tc.want)
		}
	}
}

func TestStreamErrorsNameLine(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{"Action":"start","Package":"p"}` + "\nok  \tp\n", "s.json:2: not a go test -json event"},
		{`{"Action":"run","Package":"p","Test":"TestX"}` + "\n{\"Action\":\n", "s.json:2: unexpected end of JSON input"},
		{`{"Package":"p"}` + "\n", "s.json:1: no Action"},
	} {
		_, err := readStream("s.json", strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestSkipsCommandExitStatus(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	stream := write("s.json", `{"Action":"run","Package":"m/p","Test":"TestX"}
{"Action":"output","Package":"m/p","Test":"TestX","Output":"    p_test.go:3: no gpu\n"}
{"Action":"skip","Package":"m/p","Test":"TestX"}
{"Action":"run","Package":"m/p","Test":"TestY"}
{"Action":"pass","Package":"m/p","Test":"TestY"}
`)
	allowed := write("allowed", "p TestX no GPU in CI\n")
	other := write("other", "p TestY may skip too\n")
	bad := write("bad", "p TestX\n")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"skips", "-allowed", allowed, stream}, exitOK},
		{[]string{"skips", stream}, exitFailed},
		// Lists add up: TestX is allowed by the second.
		{[]string{"skips", "-allowed", other, stream}, exitFailed},
		{[]string{"skips", "-allowed", other, "-allowed", allowed, stream}, exitOK},
		{[]string{"skips", "-allowed", bad, stream}, exitBadInput},
		{[]string{"skips", "-allowed", allowed, filepath.Join(dir, "missing.json")}, exitBadInput},
		{[]string{"skips"}, exitBadInput},
		{[]string{"frobnicate"}, exitBadInput},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, code, tc.code, stdout.String(), stderr.String())
		}
	}
}
