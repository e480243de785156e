package shard

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/scenarios"
	"github.com/provebench/provebench/spec"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
	}{{"1/1", Spec{1, 1}}, {"2/4", Spec{2, 4}}, {" 4/4 ", Spec{4, 4}}, {"10/10000", Spec{10, 10000}}} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, msg string }{
		{"", "want k/n"},
		{"3", "want k/n"},
		{"0/4", "numbered from 1"},
		{"5/4", "not between 1 and 4"},
		{"-1/4", "not between 1 and 4"},
		{"1/0", "not between 1 and"},
		{"1/10001", "not between 1 and"},
		{"a/4", "not a whole number"},
		{"1/b", "not a whole number"},
		{"1/2/3", "not a whole number"},
	} {
		if _, err := Parse(tc.in); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parse(%q): error %v, want one saying %q", tc.in, err, tc.msg)
		}
	}
}

func TestResolve(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, tc := range []struct {
		name  string
		flag  string
		count int
		env   func(string) (string, bool)
		want  Spec
		err   string
	}{
		{"k/n", "3/4", 0, env(IndexEnv, "0"), Spec{3, 4}, ""},
		{"k/n with count", "3/4", 4, env(), Spec{}, "goes with --shard auto"},
		{"auto, count flag", "auto", 4, env(IndexEnv, "0"), Spec{1, 4}, ""},
		{"auto, count env", "auto", 0, env(IndexEnv, "3", CountEnv, "4"), Spec{4, 4}, ""},
		{"auto, flag beats env", "auto", 5, env(IndexEnv, "4", CountEnv, "4"), Spec{5, 5}, ""},
		{"auto, no index", "auto", 4, env(), Spec{}, "JOB_COMPLETION_INDEX is not set"},
		{"auto, bad index", "auto", 4, env(IndexEnv, "x"), Spec{}, "not a completion index"},
		{"auto, negative index", "auto", 4, env(IndexEnv, "-1"), Spec{}, "not a completion index"},
		{"auto, index too big", "auto", 4, env(IndexEnv, "4"), Spec{}, "below the shard count 4"},
		{"auto, no count", "auto", 0, env(IndexEnv, "1"), Spec{}, "PROVEBENCH_SHARD_COUNT"},
		{"auto, bad count", "auto", 0, env(IndexEnv, "1", CountEnv, "four"), Spec{}, "not a whole number"},
		{"auto, zero count", "auto", 0, env(IndexEnv, "0", CountEnv, "0"), Spec{}, "not between 1 and"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.flag, tc.count, tc.env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// specs makes n configurations named c00, c01, ...
func specs(n int) []spec.Spec {
	out := make([]spec.Spec, n)
	for i := range out {
		out[i] = spec.Spec{Name: fmt.Sprintf("c%02d", i), Source: fmt.Sprintf("s.yaml:%d", i+1), Repeats: 1}
	}
	return out
}

// Every configuration is in exactly one shard, each shard keeps sweep
// order, and the split is round-robin.
func TestSelectDisjointAndComplete(t *testing.T) {
	for _, total := range []int{0, 1, 5, 12} {
		all := specs(total)
		for n := 1; n <= 7; n++ {
			seen := make([]int, total)
			for k := 1; k <= n; k++ {
				picked, rec, err := Select(all, Spec{k, n})
				if err != nil {
					t.Fatal(err)
				}
				if rec.Configurations != total || len(rec.Positions) != len(picked) {
					t.Fatalf("%d/%d of %d: record %+v for %d picked", k, n, total, rec, len(picked))
				}
				for i, p := range rec.Positions {
					seen[p]++
					if p%n != k-1 || picked[i].Name != all[p].Name || (i > 0 && p <= rec.Positions[i-1]) {
						t.Fatalf("%d/%d of %d: position %d holds %s", k, n, total, p, picked[i].Name)
					}
				}
			}
			for p, c := range seen {
				if c != 1 {
					t.Fatalf("n=%d of %d: configuration %d is in %d shards", n, total, p, c)
				}
			}
		}
	}
}

// The plan names the sweep, not where its files are: the same
// configurations from another path plan the same, any change of setting,
// name or order does not.
func TestPlan(t *testing.T) {
	base, err := Plan(specs(4))
	if err != nil {
		t.Fatal(err)
	}
	moved := specs(4)
	for i := range moved {
		moved[i].Source = "/elsewhere/" + moved[i].Source
	}
	if p, _ := Plan(moved); p != base {
		t.Error("moving the scenario file changed the plan")
	}
	changes := map[string]func([]spec.Spec){
		"repeats": func(s []spec.Spec) { s[2].Repeats = 3 },
		"name":    func(s []spec.Spec) { s[0].Name = "x" },
		"order":   func(s []spec.Spec) { s[0], s[1] = s[1], s[0] },
	}
	for what, change := range changes {
		s := specs(4)
		change(s)
		if p, _ := Plan(s); p == base {
			t.Errorf("changing the %s kept the plan", what)
		}
	}
	if p, _ := Plan(specs(3)); p == base {
		t.Error("dropping a configuration kept the plan")
	}
}

// The shipped scenario files split the same way on every load.
func TestSelectEmbeddedStable(t *testing.T) {
	for _, name := range scenarios.EmbeddedNames() {
		a, err := scenarios.LoadEmbedded(name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := scenarios.LoadEmbedded(name)
		pa, _ := Plan(a)
		pb, _ := Plan(b)
		if pa != pb {
			t.Errorf("%s: two loads plan differently", name)
		}
		var names []string
		for k := 1; k <= 3; k++ {
			picked, _, _ := Select(a, Spec{k, 3})
			for _, s := range picked {
				names = append(names, s.Name)
			}
		}
		var want []string
		for _, s := range a {
			want = append(want, s.Name)
		}
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("%s: shards hold %v, want %v", name, names, want)
		}
	}
}
