package docs

import (
	"bufio"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// A shell block of a Markdown file: the file, its first line's number and
// its text.
type shellBlock struct {
	file string
	line int
	text string
	// section is the heading of the second level the block sits under.
	section string
}

// key names a block in notRun: its file and its first command line.
func (b shellBlock) key() string {
	for _, l := range strings.Split(b.text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return b.file + ": " + l
		}
	}
	return b.file + ": (empty)"
}

var fence = regexp.MustCompile("^```(sh|bash|shell|console)\\s*$")

// shellBlocks lists the shell blocks of a Markdown file.
func shellBlocks(t *testing.T, file string) []shellBlock {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []shellBlock
	var cur *shellBlock
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur != nil && strings.HasPrefix(l, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		case fence.MatchString(l):
			cur = &shellBlock{file: file, line: n, section: section}
		case strings.HasPrefix(l, "## "):
			section = strings.TrimPrefix(l, "## ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// readmeRuns is the README's section whose blocks TestReadmeWorkflows runs,
// in order, in one folder.
const readmeRuns = "First workflows"

// notRun lists every other shell block of README.md and docs/*.md, by its
// file and first command line, with why make test does not run it.
var notRun = map[string]string{
	"../README.md: make run     # build bin/provebench, run the quickstart on the CPU backend, write results, report, plots": ".ci/run's last part runs it on a fresh checkout",
	"ci-workflow.md: provebench ab scenarios/ci.yaml -o out/ab --base-binary bin/base \\":                                    "a base binary built from another commit; minutes of pairs (the README's ab block runs ab)",
	"ci-workflow.md: provebench ab scenarios/ci.yaml -o out/ab --base-binary /tmp/provebench-main":                           "a base binary built from main; minutes of pairs (the README's ab block runs ab)",
	"gpu.md: make icicle          # ICICLE front end + its CPU device (about 3 minutes on 2 cores, once)":                    "cmake and minutes of C++ build; .ci/run's icicle part and make test's cuda suite run them",
	"gpu.md: make run-cuda                                  # bin/provebench-cuda run scenarios/gpu.yaml --backend cuda":     "needs an NVIDIA GPU",
	"gpu.md: export ICICLE_BACKEND_INSTALL_DIR=$PWD/.device/icicle-cuda":                                                     "needs an NVIDIA GPU and ICICLE's CUDA backend",
	"peer.md: make peer-gnark            # bin/peer-gnark (CPU)":                                                             "builds a second module; .ci/run's build part and make test's peer suite run these",
	"peer.md: make build peer-gnark":                                                                                         "TestPeerGnarkScenario (cmd/provebench) runs this scenario where bin/peer-gnark is built (.ci/run builds it)",
	"peer.md: make build-cuda peer-gnark-cuda           # where Go is":                                                       "needs an NVIDIA GPU",
	"peer.md: make peer-bench-bin CUDA=1":                                                                                    "needs an NVIDIA GPU",
	"sharding.md: provebench run scenarios/gpu.yaml --shard 1/3 --no-report -o out/shard-1   # host 1":                       "scenarios/gpu.yaml is sized for an H200 (2^24); TestShardedMergedEqualsUnsharded (cmd/provebench) runs shards and merge",
	"sharding.md: IMAGE=registry.example.com/provebench:cuda       # a registry your cluster pulls from":                     "needs a container registry and a Kubernetes cluster; TestKubernetesManifests checks the manifests",
	"simulate.md: provebench run calibration.yaml --interleave -o out/cal      # plain shapes, two sizes at least":           "files of your own, minutes of runs; TestSimulateCrossValidate (cmd/provebench) runs the cross-validation",
	"exec.md: npm install --prefix .snarkjs snarkjs@0.7.6":                                                                   "npm; TestSnarkJSScenario (cmd/provebench) runs the scenario where .ci/run installed snarkjs",
	"reference.md: provebench ab scenarios/ci.yaml -o out/ab --base-binary /tmp/provebench-base --new-binary bin/provebench": "a base binary built from another commit; minutes of pairs (the README's ab block runs ab)",
	"reference.md: provebench history add --db nightly.db out/nightly            # after each night's run":                   "a night's run of your own; the README's history block runs add, show and changes",
	"reference.md: make test                          # what CI runs (.ci/run also runs `make run`)":                         "make test is what runs this test; the others take minutes (fuzzing, flaky rounds, gate-check) or npm",
	"report-example/README.md: make build":                                                                                   "needs chromium and ImageMagick; makes the committed screenshots",
}

// markdownFiles are the documents whose shell blocks must be run or listed.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]string{"../README.md"}, files...), more...)
}

// Issue 41, item 2: every shell block of README.md and docs/*.md is run by
// make test (the README's first workflows, below) or listed in notRun with
// the reason it cannot be; a listed block that is gone is a stale entry.
func TestShellBlocksAreRunOrListed(t *testing.T) {
	seen := map[string]bool{}
	for _, file := range markdownFiles(t) {
		for _, b := range shellBlocks(t, file) {
			if b.file == "../README.md" && b.section == readmeRuns {
				continue
			}
			seen[b.key()] = true
			if _, ok := notRun[b.key()]; !ok {
				t.Errorf("%s:%d: a shell block neither run by a test nor listed in notRun with a reason (key %q)", b.file, b.line, b.key())
			}
		}
	}
	for k := range notRun {
		if !seen[k] {
			t.Errorf("notRun lists %q, which no document holds any more", k)
		}
	}
}

// Issue 41, item 2: the README's first workflows run as written, in one
// folder standing for the clone's root after make build, each block with
// bash -e, so that a command that fails when copied fails here. The
// outcomes the README states are checked too.
func TestReadmeWorkflows(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds provebench and runs some 60 repetitions")
	}
	var blocks []shellBlock
	for _, b := range shellBlocks(t, "../README.md") {
		if b.section == readmeRuns {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) < 5 {
		t.Fatalf("README's %q has %d shell blocks, want the five workflows", readmeRuns, len(blocks))
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bin", "provebench")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(provebench(t), bin); err != nil {
		t.Fatal(err)
	}
	committed := hasCommit(t, provebench(t))
	var all strings.Builder
	for _, b := range blocks {
		if strings.Contains(b.text, "history add") && !committed {
			// Go stamps no commit into a binary built in a git worktree
			// (its .git is a file); history refuses such documents by
			// design. CI's checkout has a .git folder.
			t.Logf("%s:%d: not run: this checkout's build records no git commit, which history add needs", b.file, b.line)
			continue
		}
		cmd := exec.Command("bash", "-e", "-c", b.text)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PROVEBENCH_CACHE="+filepath.Join(root, "cache"), "GITHUB_STEP_SUMMARY=")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("%s:%d: %.1f s", b.file, b.line, time.Since(start).Seconds()) // the first hour's steps, timed
		all.Write(out)
		if err != nil {
			t.Fatalf("%s:%d: the block fails when copied: %v\n%s\n--- output:\n%s", b.file, b.line, err, b.text, out)
		}
	}
	for _, want := range []string{"no problems", "provebench compare: ", "ab exited 3", "calibration: 4 configurations"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the workflows' output lacks %q, which the README leads a reader to expect", want)
		}
	}
	if committed && !strings.Contains(all.String(), "changes exited 4") {
		t.Error("history changes did not exit 4 on a one-run history, as the README says")
	}
}

// hasCommit reports whether the binary records the git commit it was built
// from.
func hasCommit(t *testing.T, bin string) bool {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			return true
		}
	}
	return false
}

// built is the binary the docs tests share: built once, as make build
// builds it (the commit recorded where the checkout allows).
var built struct {
	once sync.Once
	path string
	err  error
}

// provebench builds bin/provebench once for this test binary and returns
// its path.
func provebench(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "provebench-docs-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "provebench")
		build := exec.Command("go", "build", "-buildvcs=true", "-o", built.path, "../cmd/provebench")
		build.Env = append(os.Environ(), "GOFLAGS=", "CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations")
		if out, err := build.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// TestMain removes the shared binary's folder once the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}
