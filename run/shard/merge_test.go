package shard

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/spec"
)

var t0 = time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)

// shardDocs runs nothing: it builds the results documents the n shards of
// the sweep would write, each shard on its own host.
func shardDocs(t *testing.T, all []spec.Spec, n int) []Input {
	t.Helper()
	var in []Input
	for k := 1; k <= n; k++ {
		picked, rec, err := Select(all, Spec{k, n})
		if err != nil {
			t.Fatal(err)
		}
		doc := &results.Run{
			Schema: results.SchemaVersion, Tool: "provebench", ToolVersion: "v0.1.0 0123abcd",
			StartedAt: t0.Add(time.Duration(k) * time.Minute), FinishedAt: t0.Add(time.Duration(k+10) * time.Minute),
			Complete:      true,
			ToolSHA256:    strings.Repeat(fmt.Sprint(k), 64), // each host built its own binary
			Environment:   results.Environment{Hostname: fmt.Sprintf("node-%d", k), CPUModel: "EPYC", CPUs: 16, GitCommit: "0123abcd"},
			ScenarioFiles: []results.ScenarioFile{{Path: "scenarios/gpu.yaml", SHA256: "aa11"}},
			Shard:         rec,
			Scenarios:     []results.Scenario{},
		}
		for _, s := range picked {
			doc.Scenarios = append(doc.Scenarios, results.Scenario{Name: s.Name, Repetitions: []results.Repetition{{Status: results.StatusOK}}})
		}
		in = append(in, Input{Name: fmt.Sprintf("shard-%d/results.json", k), Run: doc})
	}
	return in
}

func names(doc *results.Run) []string {
	var out []string
	for _, sc := range doc.Scenarios {
		out = append(out, sc.Name)
	}
	return out
}

// Sharded and merged is the unsharded sweep, in its order, whatever order
// the shards come in; each configuration keeps its shard's host.
func TestMergeEqualsUnsharded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, total := range []int{1, 5, 12} {
		all := specs(total)
		want := strings.Join(names(&results.Run{Scenarios: scenariosOf(all)}), " ")
		for _, n := range []int{1, 2, 3, 4, 7, 13} {
			in := shardDocs(t, all, n)
			rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
			doc, err := Merge(in, MergeOptions{})
			if err != nil {
				t.Fatalf("%d configurations, %d shards: %v", total, n, err)
			}
			if got := strings.Join(names(doc), " "); got != want {
				t.Fatalf("%d configurations, %d shards: merged %s, want %s", total, n, got, want)
			}
			if !doc.Complete || doc.Shard != nil || len(doc.Shards) != n {
				t.Fatalf("merged: complete %v, shard %v, %d shard runs", doc.Complete, doc.Shard, len(doc.Shards))
			}
			if !doc.StartedAt.Equal(t0.Add(time.Minute)) || !doc.FinishedAt.Equal(t0.Add(time.Duration(n+10)*time.Minute)) {
				t.Errorf("merged span %v to %v", doc.StartedAt, doc.FinishedAt)
			}
			for i, sc := range doc.Scenarios {
				k := i%n + 1
				if sc.Shard != k || doc.ScenarioEnvironment(i).Hostname != fmt.Sprintf("node-%d", k) {
					t.Fatalf("%s: shard %d on %s, want shard %d", sc.Name, sc.Shard, doc.ScenarioEnvironment(i).Hostname, k)
				}
			}
		}
	}
}

func scenariosOf(specs []spec.Spec) []results.Scenario {
	var out []results.Scenario
	for _, s := range specs {
		out = append(out, results.Scenario{Name: s.Name})
	}
	return out
}

func TestMergeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(in []Input) []Input
		msg    string
	}{
		{"not a shard", func(in []Input) []Input { in[1].Run.Shard = nil; return in }, "shard-2/results.json: not a shard"},
		{"merged already", func(in []Input) []Input {
			in[1].Run.Shard, in[1].Run.Shards = nil, []results.ShardRun{{Index: 1}}
			return in
		}, "already merged"},
		{"overlap", func(in []Input) []Input { return append(in, in[1]) }, "are both shard 2/3: shards overlap"},
		{"missing", func(in []Input) []Input { return in[:2] }, "shard 3/3 is missing"},
		{"two missing", func(in []Input) []Input { return in[1:2] }, "shards 1/3, 3/3 are missing"},
		{"version", func(in []Input) []Input { in[2].Run.ToolVersion = "v0.2.0 4567"; return in }, `shard 1/3 (shard-1/results.json) and shard 3/3 (shard-3/results.json) differ in provebench version: "v0.1.0 0123abcd" vs "v0.2.0 4567"`},
		// Issue 20, item 10: "(devel)" for every local build, so the commit decides.
		{"commit", func(in []Input) []Input {
			for i := range in {
				in[i].Run.ToolVersion = "(devel)"
			}
			in[1].Run.Environment.GitCommit = "89efcafe"
			return in
		}, "shard 1/3 (shard-1/results.json) and shard 2/3 (shard-2/results.json) differ in provebench commit: 0123abcd vs 89efcafe"},
		{"commit unknown", func(in []Input) []Input { in[2].Run.Environment.GitCommit = ""; return in }, "differ in provebench commit: 0123abcd vs unknown"},
		{"modified tree, other binary", func(in []Input) []Input {
			for i := range in {
				in[i].Run.Environment.GitCommit = "0123abcd+dirty"
			}
			return in
		}, "shard 1/3 (shard-1/results.json) and shard 2/3 (shard-2/results.json) differ in provebench binary (the commit 0123abcd+dirty does not identify a build): sha256 111111111111 vs sha256 222222222222"},
		{"no commit, other binary", func(in []Input) []Input {
			for i := range in {
				in[i].Run.Environment.GitCommit, in[i].Run.ToolSHA256 = "", in[0].Run.ToolSHA256
			}
			in[2].Run.ToolSHA256 = ""
			return in
		}, "shard 1/3 (shard-1/results.json) and shard 3/3 (shard-3/results.json) differ in provebench binary (the commit unknown does not identify a build): sha256 111111111111 vs sha256 unknown"},
		{"file content", func(in []Input) []Input {
			in[1].Run.ScenarioFiles = []results.ScenarioFile{{Path: "scenarios/gpu.yaml", SHA256: "bb22"}}
			return in
		}, "differ in scenario file 1: scenarios/gpu.yaml (sha256 aa11) vs scenarios/gpu.yaml (sha256 bb22)"},
		{"file list", func(in []Input) []Input {
			in[1].Run.ScenarioFiles = append(in[1].Run.ScenarioFiles, results.ScenarioFile{Path: "x.yaml"})
			return in
		}, "differ in scenario files: scenarios/gpu.yaml vs scenarios/gpu.yaml, x.yaml"},
		{"plan", func(in []Input) []Input { in[1].Run.Shard.Plan = "sha256:other"; return in }, "differ in the configurations' settings"},
		{"count", func(in []Input) []Input {
			in[2] = shardDocs(t, specs(7), 4)[2]
			return in
		}, "differ in shard count: 3 vs 4"},
		{"count inconsistent", func(in []Input) []Input {
			in[2].Run.Shard.Count = 4
			return in
		}, "is not a position of shard 3/4"},
		{"edited positions", func(in []Input) []Input { in[0].Run.Shard.Positions[1] = 2; return in }, "shard.positions[1] = 2 is not a position of shard 1/3"},
		{"duplicate configuration", func(in []Input) []Input {
			in[1].Run.Scenarios[0].Name = in[0].Run.Scenarios[0].Name
			return in
		}, "configuration c00 is in both shard-1/results.json and shard-2/results.json"},
		{"no input", func([]Input) []Input { return nil }, "no results"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.change(shardDocs(t, specs(7), 3))
			doc, err := Merge(in, MergeOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want one saying %q", err, tc.msg)
			}
			if doc != nil {
				t.Error("a refused merge returned a document")
			}
		})
	}
}

// A file at another path with the same content is the same file.
func TestMergeSameContentOtherPath(t *testing.T) {
	in := shardDocs(t, specs(4), 2)
	in[1].Run.ScenarioFiles = []results.ScenarioFile{{Path: "/checkout/scenarios/gpu.yaml", SHA256: "aa11"}}
	if _, err := Merge(in, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The merged document has the shards' run order when they agree, none when
// they differ; each shard keeps its own.
func TestMergeRunOrder(t *testing.T) {
	in := shardDocs(t, specs(4), 2)
	for _, x := range in {
		x.Run.RunOrder = results.RunOrderInterleaved
	}
	doc, err := Merge(in, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.RunOrder != results.RunOrderInterleaved || doc.Shards[1].RunOrder != results.RunOrderInterleaved {
		t.Fatalf("merged run order %q, shard 2's %q", doc.RunOrder, doc.Shards[1].RunOrder)
	}
	in[0].Run.RunOrder = ""
	if doc, err = Merge(in, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	if doc.RunOrder != "" || doc.Shards[0].RunOrder != "" || doc.Shards[1].RunOrder != results.RunOrderInterleaved {
		t.Fatalf("mixed shards: merged run order %q, shards %q and %q", doc.RunOrder, doc.Shards[0].RunOrder, doc.Shards[1].RunOrder)
	}
}

func TestMergeAllowMissingAndIncomplete(t *testing.T) {
	in := shardDocs(t, specs(7), 3)
	doc, err := Merge([]Input{in[2], in[0]}, MergeOptions{AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Complete {
		t.Error("a merge with a shard missing is marked complete")
	}
	if got := strings.Join(names(doc), " "); got != "c00 c02 c03 c05 c06" {
		t.Errorf("merged %s", got)
	}

	// A shard interrupted after its first configuration.
	in = shardDocs(t, specs(7), 3)
	in[1].Run.Scenarios = in[1].Run.Scenarios[:1]
	doc, err = Merge(in, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Complete || len(doc.Scenarios) != 6 {
		t.Errorf("merge of an interrupted shard: complete %v, %d scenarios", doc.Complete, len(doc.Scenarios))
	}
}
