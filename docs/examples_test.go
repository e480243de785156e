// Package docs holds the documentation; its test keeps the sharding
// examples (the GitHub Actions workflow and the Kubernetes manifests)
// consistent with themselves and with provebench's flags.
package docs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// readYAML decodes every document of a YAML file.
func readYAML(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, d)
	}
}

// at walks a decoded document: keys for maps, indexes for lists.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not a map at %q", path, k)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no item %d", path, k)
			}
			v = l[k]
		}
	}
	return v
}

func str(v any) string { return fmt.Sprint(v) }

func TestShardWorkflow(t *testing.T) {
	wf := readYAML(t, "github-actions-shards.yml")[0]
	shards, _ := at(t, wf, "jobs", "shard", "strategy", "matrix", "shard").([]any)
	if len(shards) < 2 {
		t.Fatalf("matrix.shard %v: want the shards 1..n", shards)
	}
	for i, s := range shards {
		if s != i+1 {
			t.Fatalf("matrix.shard %v: want 1, 2, ..., n (run --shard counts from 1)", shards)
		}
	}
	if at(t, wf, "jobs", "shard", "strategy", "fail-fast") != false {
		t.Error("shard jobs: fail-fast must be false, or one failure cancels the other shards")
	}
	steps := func(job string) string {
		var all []string
		for _, s := range at(t, wf, "jobs", job, "steps").([]any) {
			all = append(all, str(at(t, s, "run")), str(at(t, s, "with")))
		}
		return strings.Join(all, "\n")
	}
	shard := steps("shard")
	for _, want := range []string{"--shard ${{ matrix.shard }}/${{ strategy.job-total }}", "name:provebench-shard-${{ matrix.shard }}", "path:out/shard/"} {
		if !strings.Contains(shard, want) {
			t.Errorf("shard job: no %q in\n%s", want, shard)
		}
	}
	merge := steps("merge")
	for _, want := range []string{"pattern:provebench-shard-*", "path:shards", "provebench merge shards/provebench-shard-* -o out/merged"} {
		if !strings.Contains(merge, want) {
			t.Errorf("merge job: no %q in\n%s", want, merge)
		}
	}
	if at(t, wf, "jobs", "merge", "needs") != "shard" {
		t.Error("merge job: must need the shard jobs")
	}
	scenario := str(at(t, wf, "on", "workflow_dispatch", "inputs", "scenario", "default"))
	if _, err := os.Stat(filepath.Join("..", scenario)); err != nil {
		t.Errorf("workflow's scenario: %v", err)
	}
}

func TestKubernetesManifests(t *testing.T) {
	sweep := readYAML(t, filepath.Join("kubernetes", "sweep.yaml"))
	if len(sweep) != 2 || sweep[0]["kind"] != "PersistentVolumeClaim" || sweep[1]["kind"] != "Job" {
		t.Fatalf("sweep.yaml: want a PersistentVolumeClaim and a Job")
	}
	claim := str(at(t, sweep[0], "metadata", "name"))
	if at(t, sweep[0], "spec", "accessModes", 0) != "ReadWriteMany" {
		t.Error("the results volume must be ReadWriteMany: pods on several nodes write to it")
	}
	job := sweep[1]
	if at(t, job, "spec", "completionMode") != "Indexed" {
		t.Fatal("sweep: not an Indexed Job (no JOB_COMPLETION_INDEX)")
	}
	n, _ := at(t, job, "spec", "completions").(int)
	pod := at(t, job, "spec", "template", "spec")
	c := at(t, pod, "containers", 0)
	var count string
	for _, e := range at(t, c, "env").([]any) {
		if at(t, e, "name") == "PROVEBENCH_SHARD_COUNT" {
			count = str(at(t, e, "value"))
		}
	}
	if count != strconv.Itoa(n) || n < 2 {
		t.Errorf("completions %d, PROVEBENCH_SHARD_COUNT %q: they must be equal", n, count)
	}
	if gpus := at(t, c, "resources", "limits", "nvidia.com/gpu"); gpus != 1 {
		t.Errorf("nvidia.com/gpu limit %v, want 1 per pod", gpus)
	}
	args := str(at(t, c, "args", 0))
	for _, want := range []string{"provebench run scenarios/gpu.yaml", "--shard auto", `-o "/results/shard-$JOB_COMPLETION_INDEX"`} {
		if !strings.Contains(args, want) {
			t.Errorf("sweep args %q: no %q", args, want)
		}
	}
	if at(t, pod, "volumes", 0, "persistentVolumeClaim", "claimName") != claim || at(t, c, "volumeMounts", 0, "mountPath") != "/results" {
		t.Error("sweep: the results volume is not mounted at /results")
	}
	if _, err := os.Stat(filepath.Join("..", "scenarios", "gpu.yaml")); err != nil {
		t.Error(err)
	}

	merge := readYAML(t, filepath.Join("kubernetes", "merge.yaml"))
	margs := at(t, merge[0], "spec", "template", "spec", "containers", 0, "args").([]any)
	want := []string{"merge"}
	for i := range n {
		want = append(want, fmt.Sprintf("/results/shard-%d", i))
	}
	want = append(want, "-o", "/results/merged")
	if fmt.Sprint(margs) != fmt.Sprint(want) {
		t.Errorf("merge args %v, want %v (one folder per completion index)", margs, want)
	}
	for _, d := range merge {
		var vols []any
		if d["kind"] == "Job" {
			vols = at(t, d, "spec", "template", "spec", "volumes").([]any)
		} else {
			vols = at(t, d, "spec", "volumes").([]any)
		}
		if at(t, vols[0], "persistentVolumeClaim", "claimName") != claim {
			t.Errorf("merge.yaml %s: not on the results volume %s", d["kind"], claim)
		}
	}
}

// TestGateWorkflowTreatsInconclusive: the example ab step says what it
// does with exit 4 (inconclusive) rather than letting it pass unnoticed.
func TestGateWorkflowTreatsInconclusive(t *testing.T) {
	wf := readYAML(t, "github-actions-example.yml")[0]
	steps, _ := at(t, wf, "jobs", "ab", "steps").([]any)
	for _, st := range steps {
		m, _ := st.(map[string]any)
		if m["id"] != "ab" {
			continue
		}
		run := str(m["run"])
		for _, want := range []string{" ab ", "--until-resolved", `"$rc" -eq 4`, "::warning", `exit "$rc"`, "GITHUB_OUTPUT"} {
			if !strings.Contains(run, want) {
				t.Errorf("the ab step lacks %q:\n%s", want, run)
			}
		}
		return
	}
	t.Fatal("no step with id ab in the ab job")
}
