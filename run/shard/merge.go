package shard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/provebench/provebench/results"
)

// Input is one shard's results document and where it was read from (for
// messages).
type Input struct {
	Name string
	Run  *results.Run
}

// MergeOptions configure Merge.
type MergeOptions struct {
	// AllowMissing merges when some shards of the sweep are absent; the
	// merged document is then marked incomplete.
	AllowMissing bool
}

// Merge joins the results of a sweep's shards into one document whose
// configurations are in the order an unsharded run of the sweep would have
// them. It refuses, naming the shard and what differs: documents that are
// not shards, shards of different provebench builds (commit, version, and
// the binary where the commit does not identify it), scenario files,
// sweeps or shard counts, two documents of the same shard (overlap), and
// missing shards unless opts.AllowMissing. Each shard's host is kept in
// the merged document's Shards, and each scenario names its shard.
func Merge(in []Input, opts MergeOptions) (*results.Run, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("merge: no results to merge")
	}
	for i := range in {
		if err := checkShard(in[i]); err != nil {
			return nil, err
		}
	}
	sorted := slices.Clone(in)
	slices.SortStableFunc(sorted, func(a, b Input) int { return a.Run.Shard.Index - b.Run.Shard.Index })
	ref := sorted[0]
	for i, x := range sorted {
		if err := sameSweep(ref, x); err != nil {
			return nil, err
		}
		if i > 0 && x.Run.Shard.Index == sorted[i-1].Run.Shard.Index {
			return nil, fmt.Errorf("%s and %s are both shard %s: shards overlap", sorted[i-1].Name, x.Name, shardOf(x.Run))
		}
	}
	if err := checkNames(sorted); err != nil {
		return nil, err
	}
	missing := missingShards(sorted)
	if len(missing) > 0 && !opts.AllowMissing {
		what := "shard " + missing[0] + " is"
		if len(missing) > 1 {
			what = "shards " + strings.Join(missing, ", ") + " are"
		}
		return nil, fmt.Errorf("%s missing (--allow-missing merges the ones given)", what)
	}
	return join(sorted, len(missing) == 0), nil
}

func shardOf(r *results.Run) string { return fmt.Sprintf("%d/%d", r.Shard.Index, r.Shard.Count) }

// checkShard checks that a document is a shard and consistent in itself:
// its positions are the ones the round-robin split gives its index.
func checkShard(x Input) error {
	sh := x.Run.Shard
	if sh == nil && len(x.Run.Shards) > 0 {
		return fmt.Errorf("%s: already merged (merge takes the shards' own results)", x.Name)
	}
	if sh == nil {
		return fmt.Errorf("%s: not a shard (it was run without --shard)", x.Name)
	}
	if _, err := check(Spec{Index: sh.Index, Count: sh.Count}, shardOf(x.Run)); err != nil {
		return fmt.Errorf("%s: %w", x.Name, err)
	}
	s := Spec{Index: sh.Index, Count: sh.Count}
	want := 0
	for p := range sh.Configurations {
		if s.Owns(p) {
			want++
		}
	}
	if len(sh.Positions) != want {
		return fmt.Errorf("%s: shard %s of a sweep of %d configurations lists %d positions, want %d", x.Name, s, sh.Configurations, len(sh.Positions), want)
	}
	for i, p := range sh.Positions {
		if p < 0 || p >= sh.Configurations || !s.Owns(p) || (i > 0 && p <= sh.Positions[i-1]) {
			return fmt.Errorf("%s: shard.positions[%d] = %d is not a position of shard %s", x.Name, i, p, s)
		}
	}
	if len(x.Run.Scenarios) > len(sh.Positions) {
		return fmt.Errorf("%s: %d scenarios but shard %s has %d positions", x.Name, len(x.Run.Scenarios), s, len(sh.Positions))
	}
	return nil
}

// sameSweep refuses a shard that did not split the same sweep, with the
// same provebench, as the reference shard.
func sameSweep(ref, x Input) error {
	a, b := ref.Run, x.Run
	differs := func(what, av, bv string) error {
		return fmt.Errorf("shard %s (%s) and shard %s (%s) differ in %s: %s vs %s", shardOf(a), ref.Name, shardOf(b), x.Name, what, av, bv)
	}
	if err := sameBuild(a, b, differs); err != nil {
		return err
	}
	if a.Shard.Count != b.Shard.Count {
		return differs("shard count", fmt.Sprint(a.Shard.Count), fmt.Sprint(b.Shard.Count))
	}
	if err := sameFiles(a.ScenarioFiles, b.ScenarioFiles, differs); err != nil {
		return err
	}
	if a.Shard.Configurations != b.Shard.Configurations {
		return differs("number of configurations (other --filter?)", fmt.Sprint(a.Shard.Configurations), fmt.Sprint(b.Shard.Configurations))
	}
	if a.Shard.Plan != b.Shard.Plan {
		return differs("the configurations' settings (other --backend, --repeat, --warmups, --sample-interval or --filter?)",
			fmt.Sprintf("plan %.19s", a.Shard.Plan), fmt.Sprintf("plan %.19s", b.Shard.Plan))
	}
	return nil
}

// sameBuild refuses shards run by different provebench builds. tool_version
// alone cannot tell them apart ("(devel)" for every local build), so the
// commit is compared, and where the commit does not identify the build (a
// modified tree, or none recorded) the binary's own hash.
func sameBuild(a, b *results.Run, differs func(what, av, bv string) error) error {
	ca, cb := a.Environment.GitCommit, b.Environment.GitCommit
	if ca != cb {
		return differs("provebench commit", orUnknown(ca), orUnknown(cb))
	}
	if a.ToolVersion != b.ToolVersion {
		return differs("provebench version", quote(a.ToolVersion), quote(b.ToolVersion))
	}
	clean := ca != "" && !strings.HasSuffix(ca, "+dirty")
	if !clean && a.ToolSHA256 != b.ToolSHA256 {
		return differs("provebench binary (the commit "+orUnknown(ca)+" does not identify a build)",
			fmt.Sprintf("sha256 %.12s", orUnknown(a.ToolSHA256)), fmt.Sprintf("sha256 %.12s", orUnknown(b.ToolSHA256)))
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// sameFiles compares scenario files by content: the same files checked
// out at different paths are the same files.
func sameFiles(a, b []results.ScenarioFile, differs func(what, av, bv string) error) error {
	if len(a) != len(b) {
		return differs("scenario files", fileList(a), fileList(b))
	}
	for i := range a {
		if a[i].SHA256 != b[i].SHA256 {
			return differs(fmt.Sprintf("scenario file %d", i+1),
				fmt.Sprintf("%s (sha256 %.12s)", a[i].Path, a[i].SHA256),
				fmt.Sprintf("%s (sha256 %.12s)", b[i].Path, b[i].SHA256))
		}
	}
	return nil
}

func fileList(fs []results.ScenarioFile) string {
	if len(fs) == 0 {
		return "none recorded"
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.Path)
	}
	return strings.Join(names, ", ")
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// checkNames refuses a configuration that two shards both ran: with
// consistent positions this cannot happen unless a document was edited.
func checkNames(in []Input) error {
	seen := map[string]string{}
	for _, x := range in {
		for _, sc := range x.Run.Scenarios {
			if first, dup := seen[sc.Name]; dup {
				return fmt.Errorf("configuration %s is in both %s and %s: shards overlap", sc.Name, first, x.Name)
			}
			seen[sc.Name] = x.Name
		}
	}
	return nil
}

func missingShards(in []Input) []string {
	n := in[0].Run.Shard.Count
	have := make([]bool, n+1)
	for _, x := range in {
		have[x.Run.Shard.Index] = true
	}
	var out []string
	for k := 1; k <= n; k++ {
		if !have[k] {
			out = append(out, fmt.Sprintf("%d/%d", k, n))
		}
	}
	return out
}

// join builds the merged document from checked shards sorted by index.
func join(in []Input, all bool) *results.Run {
	first := in[0].Run
	out := &results.Run{
		Schema:        first.Schema,
		Tool:          first.Tool,
		ToolVersion:   first.ToolVersion,
		ToolSHA256:    first.ToolSHA256,
		StartedAt:     first.StartedAt,
		Complete:      all,
		Environment:   first.Environment,
		ScenarioFiles: first.ScenarioFiles,
		// The shards' order when they agree; each shard keeps its own.
		RunOrder:  first.RunOrder,
		Scenarios: []results.Scenario{},
	}
	type placed struct {
		pos int
		sc  results.Scenario
	}
	var scs []placed
	for _, x := range in {
		r := x.Run
		out.Shards = append(out.Shards, results.ShardRun{
			Index: r.Shard.Index, Count: r.Shard.Count,
			StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Complete: r.Complete,
			Environment: r.Environment, RunOrder: r.RunOrder,
		})
		if r.RunOrder != out.RunOrder {
			out.RunOrder = ""
		}
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(out.FinishedAt) {
			out.FinishedAt = r.FinishedAt
		}
		out.Complete = out.Complete && r.Complete && len(r.Scenarios) == len(r.Shard.Positions)
		for i, sc := range r.Scenarios {
			sc.Shard = r.Shard.Index
			scs = append(scs, placed{r.Shard.Positions[i], sc})
		}
	}
	slices.SortFunc(scs, func(a, b placed) int { return a.pos - b.pos })
	for _, p := range scs {
		out.Scenarios = append(out.Scenarios, p.sc)
	}
	return out
}
