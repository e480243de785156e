package scenarios

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/provebench/provebench/gpu/circuit"
	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/spec"
)

// load loads a document that must be valid.
func load(t *testing.T, doc string) []spec.Spec {
	t.Helper()
	specs, err := LoadBytes("test.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("LoadBytes: %v\n--- document:\n%s", err, doc)
	}
	return specs
}

// loadErrors loads a document that must be invalid and returns its problems.
func loadErrors(t *testing.T, doc string) Errors {
	t.Helper()
	specs, err := LoadBytes("test.yaml", []byte(doc))
	if err == nil {
		t.Fatalf("LoadBytes accepted the document (%d specs)\n--- document:\n%s", len(specs), doc)
	}
	if specs != nil {
		t.Errorf("LoadBytes returned %d specs along with its error", len(specs))
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error is %T, want Errors: %v", err, err)
	}
	return es
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "a.yaml", Line: 3, Column: 7, Path: "scenarios[2].pipeline.channel_capacity", Msg: "bad"}, "a.yaml:3:7: scenarios[2].pipeline.channel_capacity: bad"},
		{Error{File: "a.yaml", Line: 3, Path: "version", Msg: "bad"}, "a.yaml:3:1: version: bad"},
		{Error{File: "a.yaml", Line: 3, Column: 1, Msg: "bad"}, "a.yaml:3:1: bad"},
		{Error{File: "a.yaml", Msg: "cannot read"}, "a.yaml:1:1: cannot read"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
	es := Errors{&tests[0].e, &tests[3].e}
	if got, want := es.Error(), tests[0].want+"\n"+tests[3].want; got != want {
		t.Errorf("Errors.Error() = %q, want %q", got, want)
	}
	var e *Error
	if !errors.As(error(es), &e) || e != &tests[0].e {
		t.Errorf("errors.As did not find the first *Error")
	}
}

// A minimal valid document to graft problems onto.
const header = "version: 1\n"

// TestErrorsLocateProblems checks every kind of problem the loader reports:
// each must come out as file:line:col: path: message, at the right place,
// and alone (no spurious follow-on errors).
func TestErrorsLocateProblems(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // "line:col: path: message substring"
	}{
		{"unknown top-level field", header + "defualts: {}\nscenarios: [{name: a}]\n",
			[]string{"2:1: defualts: unknown field (did you mean defaults?)"}},
		{"unknown field in a group", header + "defaults:\n  workload:\n    partitons: 4\nscenarios: [{name: a}]\n",
			[]string{"4:5: defaults.workload.partitons: unknown field (did you mean partitions?)"}},
		{"unknown field in a scenario", header + "scenarios:\n  - name: a\n    pipline: {}\n",
			[]string{"4:5: scenarios[0].pipline: unknown field (did you mean pipeline?)"}},
		{"unknown field, nothing close", header + "scenarios:\n  - name: a\n    pipeline: {zzzzzzzz: 1}\n",
			[]string{"4:16: scenarios[0].pipeline.zzzzzzzz: unknown field; valid here: strategy, partition_workers"}},
		{"group given a scalar", header + "scenarios:\n  - name: a\n    pipeline: 3\n",
			[]string{`4:15: scenarios[0].pipeline: want a mapping of settings; got "3"`}},
		{"leaf given a mapping", header + "scenarios:\n  - name: a\n    repeats: {n: 1}\n",
			[]string{"4:14: scenarios[0].repeats: want an integer; got a mapping"}},
		{"leaf given a list", header + "scenarios:\n  - name: a\n    backend: [cpu]\n",
			[]string{"4:14: scenarios[0].backend: want one of cpu, cuda, auto; got a list"}},
		{"leaf without a value", header + "scenarios:\n  - name: a\n    repeats:\n",
			[]string{"4:13: scenarios[0].repeats: missing value: want an integer"}},
		{"bad enum", header + "scenarios:\n  - name: a\n    pipeline: {strategy: hodl}\n",
			[]string{`4:26: scenarios[0].pipeline.strategy: "hodl": want one of release, hold, budget, pacer`}},
		{"bad integer", header + "scenarios:\n  - name: a\n    repeats: three\n",
			[]string{`4:14: scenarios[0].repeats: "three": want an integer`}},
		{"integer below minimum", header + "defaults: {repeats: 0, warmups: -1}\nscenarios: [{name: a}]\n",
			[]string{"2:21: defaults.repeats: 0 is below the minimum 1", "2:33: defaults.warmups: -1 is below the minimum 0"}},
		{"pipeline minimums", header + "scenarios:\n  - name: a\n    pipeline: {gpu_workers: 0, channel_capacity: 0, synthesis_workers: -1}\n",
			[]string{
				"4:29: scenarios[0].pipeline.gpu_workers: 0 is below the minimum 1",
				"4:50: scenarios[0].pipeline.channel_capacity: 0 is below the minimum 1",
				"4:72: scenarios[0].pipeline.synthesis_workers: -1 is below the minimum 0",
			}},
		{"durations", header + "defaults: {sample_interval: 500us, timeout: 0s}\nscenarios:\n  - name: a\n    pipeline: {pacer: {interval: 1x}}\n",
			[]string{
				"2:29: defaults.sample_interval: 500us is below the minimum 1ms",
				"2:45: defaults.timeout: 0s: must be greater than 0s",
				`5:34: scenarios[0].pipeline.pacer.interval: "1x": want a duration`,
			}},
		{"constraints", header + "scenarios:\n  - name: a\n    workload: {constraints: 1000}\n  - name: b\n    workload: {constraints: 2^28}\n  - name: c\n    workload: {constraints: 16}\n",
			[]string{
				"4:29: scenarios[0].workload.constraints: constraints 1000 is not a power of two",
				"6:29: scenarios[1].workload.constraints: 2^28: constraints must be a power of two from 2^5 to 2^27",
				"8:29: scenarios[2].workload.constraints: constraints 2^4 is outside 2^5..2^27",
			}},
		{"synthesis rounds", header + "scenarios:\n  - name: a\n    workload: {synthesis_rounds: 10001}\n",
			[]string{"4:34: scenarios[0].workload.synthesis_rounds: 10001 is above the maximum 10000"}},
		{"workload minimums", header + "scenarios:\n  - name: a\n    workload: {partitions: 0, proofs: 0, concurrency: 0}\n",
			[]string{
				"4:28: scenarios[0].workload.partitions: 0 is below the minimum 1",
				"4:39: scenarios[0].workload.proofs: 0 is below the minimum 1",
				"4:55: scenarios[0].workload.concurrency: 0 is below the minimum 1",
			}},
		{"seed", header + "scenarios:\n  - name: a\n    workload: {seed: -1}\n",
			[]string{`4:22: scenarios[0].workload.seed: "-1": want an integer from 0 to 2^64-1`}},
		{"size", header + "defaults: {memory_limit: 16G}\nscenarios: [{name: a}]\n",
			[]string{`2:26: defaults.memory_limit: size "16G": unit "G" is ambiguous`}},
		{"floats", header + "scenarios:\n  - name: a\n    pipeline: {pacer: {kp: -0.5, ki: .nan, target_depth: 0}}\n",
			[]string{
				"4:28: scenarios[0].pipeline.pacer.kp: -0.5 is below the minimum 0",
				`4:38: scenarios[0].pipeline.pacer.ki: ".nan": want a finite number`,
				"4:58: scenarios[0].pipeline.pacer.target_depth: 0: must be greater than 0",
			}},
		{"bool", header + "scenarios:\n  - name: a\n    verify: yes\n",
			[]string{`4:13: scenarios[0].verify: "yes": want true or false`}},

		{"empty file", "", []string{"1:1: empty file"}},
		{"comments only", "# nothing\n", []string{"1:1: empty file"}},
		{"syntax error", header + "scenarios:\n  - name: a\n   pipeline: {\n", []string{"3:3: YAML syntax: did not find expected '-' indicator"}},
		// Every syntax problem has a line and a column (1:1 where the
		// file offers nothing better), whatever yaml.v3's message names.
		{"only spaces", "  \n\n", []string{"1:1: empty file"}},
		{"garbage", "}{", []string{"1:1: YAML syntax: did not find expected node content"}},
		{"NUL bytes", "\x00\x01\x02", []string{`1:1: YAML syntax: control character '\x00' is not allowed in YAML`}},
		{"control character", header + "scenarios: [{name: a\x07}]\n", []string{`2:21: YAML syntax: control character '\a' is not allowed`}},
		{"tab indentation", header + "scenarios:\n\t- name: a\n", []string{"3:1: YAML syntax: found character that cannot start any token"}},
		{"tab after spaces", header + "scenarios:\n  - name: a\n  \tpipeline: {}\n", []string{"4:3: YAML syntax: found a tab character that violates indentation"}},
		{"unclosed flow mapping", header + "scenarios: [{name: a\n", []string{"2:13: YAML syntax: did not find expected ',' or '}'"}},
		{"unclosed flow sequence", header + "scenarios: [\n", []string{"3:1: YAML syntax: did not find expected node content"}},
		{"unclosed at the end", "{version: 1\n", []string{"2:1: YAML syntax: did not find expected ',' or '}'"}},
		{"not UTF-8", header + "scenarios:\n  - name: caf\xe9\n", []string{"3:14: YAML syntax: not UTF-8: byte 0xe9"}},
		{"deep nesting", header + "defaults: " + strings.Repeat("[", 10001) + "\n", []string{"2:1: YAML syntax: exceeded max depth of 10000"}},
		{"unknown alias", header + "scenarios:\n  - *nope\n", []string{"3:5: YAML syntax: unknown anchor 'nope' referenced"}},
		{"second document's syntax", header + "scenarios: [{name: a}]\n---\n: : :\n", []string{"4:1: YAML syntax: "}},
		{"two documents", header + "scenarios: [{name: a}]\n---\nversion: 1\n", []string{"3:1: a second YAML document"}},
		{"not a mapping", "[1, 2]\n", []string{"1:1: want a mapping with version"}},
		{"version missing", "scenarios: [{name: a}]\n", []string{"1:1: version: missing"}},
		{"version unsupported", "version: 2\nscenarios: [{name: a, bogus: 1}]\n",
			[]string{`1:10: version: unsupported version "2": this provebench reads version 1`}},
		{"no scenarios", header + "defaults: {repeats: 1}\n", []string{"1:1: no scenarios"}},
		{"empty lists", header + "scenarios: []\nmatrix:\n", []string{"1:1: no scenarios"}},
		{"duplicate key", header + "scenarios:\n  - name: a\n    repeats: 1\n    repeats: 2\n",
			[]string{"5:5: scenarios[0].repeats: duplicate key (first at line 4)"}},
		{"scenarios not a list", header + "scenarios: {name: a}\n",
			[]string{"2:12: scenarios: want a list"}},
		{"scenario not a mapping", header + "scenarios: [a, {name: b}]\n",
			[]string{`2:13: scenarios[0]: want a mapping; got "a"`}},
		{"scenario name missing", header + "scenarios:\n  - repeats: 1\n",
			[]string{"3:5: scenarios[0].name: missing"}},
		{"scenario name invalid", header + "scenarios:\n  - name: a/b\n  - name: x y\n  - name: c=d\n",
			[]string{`3:11: scenarios[0].name: "a/b": a name is`, `4:11: scenarios[1].name: "x y"`, `5:11: scenarios[2].name: "c=d"`}},
		{"duplicate names", header + "scenarios:\n  - name: a\n  - name: a\n",
			[]string{"4:11: scenarios[1].name: duplicate scenario name a (first at test.yaml:3)"}},

		{"matrix name and axes missing", header + "matrix:\n  - description: x\n",
			[]string{"3:5: matrix[0].name: missing", "3:5: matrix[0].axes: missing"}},
		{"matrix unknown field", header + "matrix:\n  - name: m\n    axis: {}\n",
			[]string{"3:5: matrix[0].axes: missing", "4:5: matrix[0].axis: unknown field (did you mean axes?)"}},
		{"axis unknown", header + "matrix:\n  - name: m\n    axes: {pipeline.stratgy: [hold]}\n",
			[]string{"4:12: matrix[0].axes[pipeline.stratgy]: unknown field (did you mean pipeline.strategy?)"}},
		{"axis on a group", header + "matrix:\n  - name: m\n    axes: {workload: [1]}\n",
			[]string{"4:12: matrix[0].axes[workload]: workload is a group; sweep one of its fields: workload.constraints,"}},
		{"axis not a list", header + "matrix:\n  - name: m\n    axes: {repeats: 3}\n",
			[]string{`4:21: matrix[0].axes[repeats]: want a list of values`}},
		{"axis empty", header + "matrix:\n  - name: m\n    axes: {repeats: []}\n",
			[]string{"4:21: matrix[0].axes[repeats]: empty"}},
		{"axis bad value", header + "matrix:\n  - name: m\n    axes: {repeats: [1, x]}\n",
			[]string{`4:25: matrix[0].axes[repeats][1]: "x": want an integer`}},
		{"axis repeated value", header + "matrix:\n  - name: m\n    axes: {workload.constraints: [1024, 2^12, 2^10]}\n",
			[]string{"4:47: matrix[0].axes[workload.constraints][2]: 2^10 repeats the value 1024 (line 4)"}},
		{"base sets a swept field", header + "matrix:\n  - name: m\n    base: {repeats: 2}\n    axes: {repeats: [1, 3]}\n",
			[]string{"4:21: matrix[0].base.repeats: repeats is swept by axes (line 5), so this value is never used"}},
		{"matrix too large", header + "matrix:\n  - name: m\n    axes:\n      workload.seed: [1,2,3,4,5,6,7,8,9,10]\n      workload.proofs: {from: 1, to: 10, step: 1}\n      workload.partitions: {from: 1, to: 101, step: 1}\n",
			[]string{"3:5: matrix[0]: more than 10000 points"}},

		{"permits needed", header + "scenarios:\n  - name: a\n    pipeline: {strategy: hold, partition_workers: 0}\n",
			[]string{"4:51: scenarios[0].pipeline.partition_workers: 0 is too few: the hold strategy needs at least 1 partition permit"}},
		{"budget below a dataset", header + "scenarios:\n  - name: a\n    workload: {constraints: 2^14}\n    pipeline: {strategy: budget, budget: 2000KiB}\n",
			[]string{"5:42: scenarios[0].pipeline.budget: 2000KiB is less than one partition's dataset at 2^14 constraints (2097120B (~2MiB): 1536KiB a/b/c + 524256B (~512KiB) wires)"}},
		// Issue 41, item 3: a budget is the memory given to the pipeline;
		// none written used to mean 256MiB, no limit at 2^12 and no start
		// at 2^24.
		{"budget strategy without a budget", header + "scenarios:\n  - name: big\n    key: random\n    workload: {constraints: 2^24}\n    pipeline: {strategy: budget}\n",
			[]string{"6:26: scenarios[0].pipeline.strategy: budget needs pipeline.budget, the live dataset bytes the pipeline may hold (such as budget: 8GiB); it has no default"}},
		{"budget+pacer without a budget", header + "scenarios:\n  - name: a\n    pipeline: {strategy: budget+pacer}\n",
			[]string{"4:26: scenarios[0].pipeline.strategy: budget+pacer needs pipeline.budget"}},
		{"budget on a matrix axis without a budget", header + "matrix:\n  - name: m\n    axes:\n      pipeline.strategy: [hold, budget]\n",
			[]string{"5:33: matrix[0].axes[pipeline.strategy][1]: budget needs pipeline.budget"}},
		{"memory limit below a dataset", header + "scenarios:\n  - name: a\n    memory_limit: 1MiB\n",
			[]string{"4:19: scenarios[0].memory_limit: 1MiB is less than one partition's dataset at 2^14 constraints"}},
		{"setup too large", header + "scenarios:\n  - name: a\n    key: setup\n    workload: {constraints: 2^21}\n",
			[]string{"4:10: scenarios[0].key: a real setup of 2^21 constraints takes hours; above 2^20 use key random"}},
		{"pacer without feedback", header + "scenarios:\n  - name: a\n    pipeline: {strategy: pacer, pacer: {kp: 0, ki: 0}}\n",
			[]string{"4:45: scenarios[0].pipeline.pacer.kp: kp and ki are both 0"}},
		{"engine validation", header + "scenarios:\n  - name: a\n    pipeline: {strategy: pacer, pacer: {target_depth: 4, max_in_flight: 4}}\n",
			[]string{"4:73: scenarios[0].pipeline.pacer.max_in_flight: 4 cannot hold target_depth 4"}},

		// Issue 13, item 1: accepted though wrong.
		{"sample interval past the timeout", header + "scenarios:\n  - name: a\n    sample_interval: 10h\n    timeout: 2m\n",
			[]string{"4:22: scenarios[0].sample_interval: 10h is longer than the timeout of 2m"}},
		{"axes empty mapping", header + "matrix:\n  - name: m\n    axes: {}\n",
			[]string{"4:11: matrix[0].axes: empty: a matrix sweeps at least one axis"}},
		{"quoted integer and boolean", header + "scenarios:\n  - name: a\n    verify: \"false\"\n    workload: {proofs: \"2\", constraints: '16384'}\n    pipeline: {pacer: {kp: !!str 1.5}}\n",
			[]string{`4:13: scenarios[0].verify: "false" is a string (it is quoted); want true or false`,
				`5:24: scenarios[0].workload.proofs: "2" is a string (it is quoted); want an integer`,
				`5:42: scenarios[0].workload.constraints: "16384" is a string (it is quoted); want a power of two`,
				`6:28: scenarios[0].pipeline.pacer.kp: "1.5" is a string (it is quoted); want a number`}},
		{"quoted constraints as 2^k is fine, unquoted words say more", header + "scenarios:\n  - name: a\n    workload: {constraints: \"2^10\", proofs: two}\n",
			[]string{`4:45: scenarios[0].workload.proofs: "two": want an integer`}},
		// Item 4: messages.
		{"integer too large", header + "scenarios:\n  - name: a\n    repeats: 99999999999999999999\n",
			[]string{"4:14: scenarios[0].repeats: 99999999999999999999 is too large for an integer (at most 9223372036854775807)"}},
		{"constraints exponent", header + "scenarios:\n  - name: a\n    workload: {constraints: 2^40}\n  - name: b\n    workload: {constraints: 2^99}\n",
			[]string{"4:29: scenarios[0].workload.constraints: 2^40: constraints must be a power of two from 2^5 to 2^27",
				"6:29: scenarios[1].workload.constraints: 2^99: constraints must be a power of two from 2^5 to 2^27"}},
		{"field in the wrong section", header + "strategy: hold\ndefaults:\n  strategy: hold\n  pipeline: {constraints: 2^10, kp: 1}\nmatrix:\n  - name: m\n    workload: {proofs: 1}\n    axes: {repeats: [1]}\n",
			[]string{"2:1: strategy: strategy belongs under pipeline in defaults, a scenario, or a matrix's base",
				"4:3: defaults.strategy: strategy belongs under pipeline",
				"5:14: defaults.pipeline.constraints: constraints belongs under workload",
				"5:33: defaults.pipeline.kp: kp belongs under pipeline.pacer",
				"8:5: matrix[0].workload: workload belongs under base"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := loadErrors(t, tt.doc)
			var got []string
			for _, e := range es {
				got = append(got, e.Error())
			}
			if len(es) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(es), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				pos, rest, _ := strings.Cut(w, ": ")
				var line, col int
				fmt.Sscanf(pos, "%d:%d", &line, &col)
				e := es[i]
				if e.File != "test.yaml" || e.Line != line || e.Column != col {
					t.Errorf("error %d at %s:%d:%d, want test.yaml:%s\n%s", i, e.File, e.Line, e.Column, pos, got[i])
				}
				if !strings.Contains(got[i], rest) {
					t.Errorf("error %d:\n  %s\nwant it to contain\n  %s", i, got[i], rest)
				}
			}
		})
	}
}

// TestReportsEveryProblem checks that one load reports all the problems of
// a file, in line order, not just the first.
func TestReportsEveryProblem(t *testing.T) {
	doc := header + `defaults:
  repeats: 0
  pipeline: {strategy: budget, budget: 1KiB}
scenarios:
  - name: a
    warmups: -2
  - name: b
    backend: gpu
matrix:
  - name: m
    axes: {pipeline.early_free: [true, maybe]}
`
	es := loadErrors(t, doc)
	var lines []int
	for _, e := range es {
		lines = append(lines, e.Line)
	}
	if want := []int{3, 4, 7, 9, 12}; !slices.Equal(lines, want) {
		t.Errorf("problems on lines %v, want %v:\n%v", lines, want, es)
	}
}

// A problem with a shared value is one line naming the scenarios it hits.
func TestSharedValueReportedOnce(t *testing.T) {
	doc := header + "defaults:\n  pipeline: {strategy: budget, budget: 1MiB}\nscenarios:\n"
	for i := range 6 {
		doc += fmt.Sprintf("  - name: s%d\n", i)
	}
	es := loadErrors(t, doc)
	if len(es) != 1 {
		t.Fatalf("got %d errors, want 1:\n%v", len(es), es)
	}
	want := "test.yaml:3:40: defaults.pipeline.budget: 1MiB is less than one partition's dataset"
	if got := es[0].Error(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "(in scenarios s0, s1, s2, s3 and 2 more)") {
		t.Errorf("got  %s\nwant %s ... (in scenarios s0, s1, s2, s3 and 2 more)", got, want)
	}
}

// TestBuiltinDefaults pins the built-in defaults, written out here rather
// than read from the table, so a change to them is deliberate.
func TestBuiltinDefaults(t *testing.T) {
	specs := load(t, header+"scenarios: [{name: a}]\n")
	want := spec.Spec{
		Name:   "a",
		Source: "test.yaml:2",
		File:   "test",
		Workload: config.Workload{
			Constraints: 1 << 14, Partitions: 4, Proofs: 2, Concurrency: 1, SynthesisRounds: 4, BitFraction: 0.5, Seed: 1,
			Synthesis: config.SynthesisCompute,
		},
		Pipeline: config.Config{
			Strategy: config.Release, PartitionWorkers: 4, ChannelCapacity: 1, GPUWorkers: 1,
			Budget: 256 << 20, Pacer: config.DefaultPacerConfig(),
		},
		Backend: "cpu", Key: groth16.KindSetup, Verify: true,
		Repeats: 5, Warmups: 1, SampleInterval: 10 * time.Millisecond, Timeout: 10 * time.Minute,
		Measure: spec.MeasureWarm,
	}
	if !reflect.DeepEqual(specs, []spec.Spec{want}) {
		t.Errorf("got  %+v\nwant %+v", specs, []spec.Spec{want})
	}
}

func TestDeepMerge(t *testing.T) {
	doc := header + `defaults:
  repeats: 5
  memory_limit: 1.5GB
  workload: {constraints: 2^10, proofs: 3}
  pipeline:
    strategy: hold
    partition_workers: 3
    channel_capacity: 2
    pacer: {kp: 0.3, interval: 5ms}
scenarios:
  - name: a
    pipeline: {strategy: release, pacer: {ki: 0.2}}
matrix:
  - name: m
    base: {workload: {partitions: 7}, pipeline: {channel_capacity: 9}}
    axes: {pipeline.partition_workers: [1, 2]}
`
	specs := load(t, doc)
	if len(specs) != 3 {
		t.Fatalf("got %d specs, want 3", len(specs))
	}
	a := specs[0]
	if a.Pipeline.Strategy != config.Release || a.Pipeline.PartitionWorkers != 3 || a.Pipeline.ChannelCapacity != 2 {
		t.Errorf("scenario pipeline: got %+v; want strategy from the scenario, pw and C from the defaults", a.Pipeline)
	}
	if p := a.Pipeline.Pacer; p.Kp != 0.3 || p.Ki != 0.2 || p.Interval != 5*time.Millisecond || p.TargetDepth != config.DefaultTargetDepth {
		t.Errorf("pacer: got %+v; want kp and interval from the defaults, ki from the scenario, target_depth built in", p)
	}
	if a.Repeats != 5 || a.MemoryLimit != 1_500_000_000 || a.Workload.Proofs != 3 || a.Workload.Partitions != 4 || a.Workload.Constraints != 1024 {
		t.Errorf("scenario: got %+v", a)
	}
	for i, m := range specs[1:] {
		if m.Pipeline.Strategy != config.Hold || m.Pipeline.ChannelCapacity != 9 || m.Workload.Partitions != 7 ||
			m.Workload.Proofs != 3 || m.Pipeline.PartitionWorkers != i+1 {
			t.Errorf("matrix point %d: got %+v %+v; want base over defaults, axis over base", i, m.Workload, m.Pipeline)
		}
	}
}

func TestMatrixExpansion(t *testing.T) {
	doc := header + `scenarios:
  - name: first
matrix:
  - name: sweep
    description: strategies against channel depth
    axes:
      pipeline.strategy: [release, hold]
      pipeline.channel_capacity: [1, 4, 8]
  - name: sizes
    axes:
      workload.constraints: [2^10, 4096]
`
	specs := load(t, doc)
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	want := []string{
		"first",
		"sweep/strategy=release/channel_capacity=1",
		"sweep/strategy=release/channel_capacity=4",
		"sweep/strategy=release/channel_capacity=8",
		"sweep/strategy=hold/channel_capacity=1",
		"sweep/strategy=hold/channel_capacity=4",
		"sweep/strategy=hold/channel_capacity=8",
		"sizes/constraints=2^10",
		"sizes/constraints=4096",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("names:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	s := specs[5]
	if s.Pipeline.Strategy != config.Hold || s.Pipeline.ChannelCapacity != 4 {
		t.Errorf("%s: got %+v", s.Name, s.Pipeline)
	}
	if want := map[string]string{"pipeline.strategy": "hold", "pipeline.channel_capacity": "4"}; !reflect.DeepEqual(s.Labels, want) {
		t.Errorf("%s: labels %v, want %v", s.Name, s.Labels, want)
	}
	if s.Source != "test.yaml:5" || s.Description != "strategies against channel depth" {
		t.Errorf("%s: source %q description %q", s.Name, s.Source, s.Description)
	}
	if specs[0].Labels != nil {
		t.Errorf("explicit scenario has labels %v", specs[0].Labels)
	}
	if specs[8].Workload.Constraints != 4096 || specs[8].Labels["workload.constraints"] != "4096" {
		t.Errorf("%s: %+v %v", specs[8].Name, specs[8].Workload, specs[8].Labels)
	}
}

// Matrix points are ordered with the scenarios as the file writes them.
func TestDocumentOrder(t *testing.T) {
	specs := load(t, header+"matrix:\n  - name: m\n    axes: {repeats: [1]}\nscenarios:\n  - name: a\n")
	if specs[0].Name != "m/repeats=1" || specs[1].Name != "a" {
		t.Errorf("order: %s, %s", specs[0].Name, specs[1].Name)
	}
}

func TestAxisKeys(t *testing.T) {
	axes := func(paths ...string) []*axis {
		var as []*axis
		for _, p := range paths {
			as = append(as, &axis{field: &field{path: p}})
		}
		return as
	}
	tests := []struct {
		paths, want []string
	}{
		{[]string{"pipeline.strategy", "workload.seed"}, []string{"strategy", "seed"}},
		{[]string{"a.x", "b.x", "y"}, []string{"a.x", "b.x", "y"}},
		{[]string{"p.a.x", "q.a.x", "b.x"}, []string{"p.a.x", "q.a.x", "b.x"}},
		{[]string{"x", "a.x"}, []string{"x", "a.x"}},
	}
	for _, tt := range tests {
		if got := axisKeys(axes(tt.paths...)); !slices.Equal(got, tt.want) {
			t.Errorf("axisKeys(%v) = %v, want %v", tt.paths, got, tt.want)
		}
	}
}

// The loader resolves key auto and turns verify off where proofs cannot
// verify.
func TestKeyAndVerifyResolved(t *testing.T) {
	doc := header + `scenarios:
  - {name: auto-small, key: auto, workload: {constraints: 2^10}}
  - {name: auto-limit, key: auto, workload: {constraints: 2^16}}
  - {name: auto-large, key: auto, workload: {constraints: 2^17}}
  - {name: random, key: random, verify: true, workload: {constraints: 2^10}}
  - {name: setup-noverify, key: setup, verify: false, workload: {constraints: 2^10}}
  - {name: setup-limit, key: setup, workload: {constraints: 2^20}}
`
	want := map[string]struct {
		key    groth16.KeyKind
		verify bool
	}{
		"auto-small":     {groth16.KindSetup, true},
		"auto-limit":     {groth16.KindSetup, true},
		"auto-large":     {groth16.KindRandom, false},
		"random":         {groth16.KindRandom, false},
		"setup-noverify": {groth16.KindSetup, false},
		"setup-limit":    {groth16.KindSetup, true},
	}
	specs := load(t, doc)
	if len(specs) != len(want) {
		t.Fatalf("%d configurations, want %d", len(specs), len(want))
	}
	for _, s := range specs {
		if w := want[s.Name]; s.Key != w.key || s.Verify != w.verify {
			t.Errorf("%s: key %s verify %v, want %s %v", s.Name, s.Key, s.Verify, w.key, w.verify)
		}
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	doc := header + `defaults:
  pipeline: &held {strategy: hold, partition_workers: 6}
scenarios:
  - name: a
    pipeline:
      <<: *held
      channel_capacity: 6
  - name: b
    pipeline: {<<: [*held], strategy: release}
  - name: c
    workload: &w {proofs: 5}
  - name: d
    workload: *w
`
	specs := load(t, doc)
	if p := specs[0].Pipeline; p.Strategy != config.Hold || p.PartitionWorkers != 6 || p.ChannelCapacity != 6 {
		t.Errorf("a: %+v", p)
	}
	if p := specs[1].Pipeline; p.Strategy != config.Release || p.PartitionWorkers != 6 {
		t.Errorf("b: explicit key must beat the merged one: %+v", p)
	}
	if specs[3].Workload.Proofs != 5 {
		t.Errorf("d: alias not followed: %+v", specs[3].Workload)
	}
	es := loadErrors(t, header+"scenarios:\n  - name: a\n    pipeline: {<<: 3}\n")
	if len(es) != 1 || !strings.Contains(es[0].Error(), "merge key (<<) takes a mapping") {
		t.Errorf("bad merge key: %v", es)
	}
}

func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", header+"scenarios: [{name: x}, {name: y}]\n")
	b := write("b.yaml", header+"scenarios:\n  - name: z\n  - name: x\n")
	c := write("c.yaml", header+"scenarios: [{name: w}]\n")

	specs, err := Load(a, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 || specs[2].Name != "w" || specs[2].Source != c+":2" {
		t.Errorf("got %+v", specs)
	}

	dup := write("dup.yaml", header+"scenarios:\n  - name: x\n  - name: x\n")
	_, err = Load(dup, filepath.Join(dir, "missing.yaml"))
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("got %v, want two problems", err)
	}
	if want := dup + ":4:11: scenarios[1].name: duplicate scenario name x (first at " + dup + ":3)"; es[0].Error() != want {
		t.Errorf("got  %s\nwant %s", es[0], want)
	}
	if want := filepath.Join(dir, "missing.yaml") + ":1:1: cannot read: no such file or directory"; es[1].Error() != want {
		t.Errorf("got  %s\nwant %s", es[1], want)
	}

	// Issue 13, item 3: names are scoped by file. A name two files share
	// is qualified by each file; the others stay as written.
	specs, err = Load(a, b)
	if err != nil {
		t.Fatalf("a name in two files: %v", err)
	}
	var names, files []string
	for _, s := range specs {
		names, files = append(names, s.Name), append(files, s.File)
	}
	if want := []string{"a:x", "y", "z", "b:x"}; !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	if want := []string{"a", "a", "b", "b"}; !slices.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	// Files of one base name in two folders are told apart by path; one
	// file given twice is refused.
	other := filepath.Join(dir, "sub")
	os.Mkdir(other, 0o755)
	a2 := filepath.Join(other, "a.yaml")
	os.WriteFile(a2, []byte(header+"scenarios: [{name: x}]\n"), 0o644)
	if specs, err = Load(a, a2); err != nil || specs[0].Name != a+":x" || specs[2].Name != a2+":x" {
		t.Errorf("same base name: %v %+v", err, specs)
	}
	if _, err := Load(a, a); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a file given twice: %v", err)
	}
	if _, err := Load(); err == nil {
		t.Error("Load() with no files succeeded")
	}
}

func TestEmbedded(t *testing.T) {
	names := EmbeddedNames()
	if want := []string{"backpressure", "bias-h200", "bias-h200-cal", "bias-h200-cal-r4", "bias-h200-r2", "bias-h200-r3", "bias-h200-r4", "ci", "cuzk-phase12", "exec-provebench", "frozen-h200-23", "frozen-h200-24", "frozen-h200-26", "frozen-h200-cal", "gate-h200", "gate-h200-26", "gate-h200-slow", "gpu", "heldout-h200-23", "peer-gnark", "porep-h200", "quickstart", "snarkjs"}; !slices.Equal(names, want) {
		t.Fatalf("EmbeddedNames() = %v, want %v", names, want)
	}
	for _, name := range names {
		specs, err := LoadEmbedded(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(specs) == 0 {
			t.Errorf("%s: no scenarios", name)
		}
		for _, s := range specs {
			if !strings.HasPrefix(s.Source, "scenarios/"+name+".yaml:") {
				t.Errorf("%s: source %q", s.Name, s.Source)
			}
		}
	}
	if _, err := LoadEmbedded("quickstart.yaml"); err != nil {
		t.Errorf("LoadEmbedded with extension: %v", err)
	}
	if _, err := LoadEmbedded("nope"); err == nil || !strings.Contains(err.Error(), "backpressure, bias-h200, bias-h200-cal, bias-h200-cal-r4, bias-h200-r2, bias-h200-r3, bias-h200-r4, ci, cuzk-phase12, exec-provebench, frozen-h200-23, frozen-h200-24, frozen-h200-26, frozen-h200-cal, gate-h200, gate-h200-26, gate-h200-slow, gpu, heldout-h200-23, peer-gnark, porep-h200, quickstart, snarkjs") {
		t.Errorf("LoadEmbedded(nope): %v", err)
	}
}

// datasetBytes is one partition's dataset at a spec's size.
func datasetBytes(s spec.Spec) int64 {
	abc, wires := circuit.Params{Constraints: s.Workload.Constraints}.DatasetBytes()
	return abc + wires
}

// TestEmbeddedFilesKeepTheirPromises checks what the files' comments claim
// about their configurations, so an edit cannot quietly break them.
func TestEmbeddedFilesKeepTheirPromises(t *testing.T) {
	byName := func(file string) map[string]spec.Spec {
		specs, err := LoadEmbedded(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(specs) == 0 {
			t.Fatalf("%s: no configuration to keep a promise", file)
		}
		m := make(map[string]spec.Spec)
		for _, s := range specs {
			m[s.Name] = s
		}
		return m
	}
	// budgetHolds is how many whole datasets a budget admits at once.
	budgetHolds := func(s spec.Spec) int64 { return s.Pipeline.Budget / datasetBytes(s) }

	t.Run("quickstart", func(t *testing.T) {
		specs := byName("quickstart")
		for _, s := range specs {
			if s.Backend != "cpu" || s.Key != groth16.KindSetup || !s.Verify {
				t.Errorf("%s: want the CPU backend with a real, verified setup: %+v", s.Name, s)
			}
		}
		if n := budgetHolds(specs["budget"]); n != 2 {
			t.Errorf("budget holds %d datasets, the file says 2", n)
		}
		if len(specs) > 4 || specs["release"].Repeats+specs["release"].Warmups > 6 {
			t.Errorf("quickstart grew: %d scenarios; keep it under 2 minutes on 2 cores", len(specs))
		}
	})
	t.Run("ci", func(t *testing.T) {
		specs := byName("ci")
		for _, s := range specs {
			if s.Pipeline.Strategy == config.Pacer {
				t.Errorf("%s: the pacer's peaks depend on timing; ci figures must repeat exactly", s.Name)
			}
			if s.Workload.SynthesisRounds != 0 || s.Repeats < 5 || s.Backend != "cpu" || !s.Verify {
				t.Errorf("%s: want saturated CPU runs with 5+ verified repeats: %+v", s.Name, s)
			}
		}
		if n := budgetHolds(specs["budget"]); n != 2 {
			t.Errorf("budget holds %d datasets, the file says 2", n)
		}
	})
	t.Run("backpressure", func(t *testing.T) {
		specs := byName("backpressure")
		if len(specs) != 12 {
			t.Errorf("%d configurations, want 12 (6 strategies x early free off/on)", len(specs))
		}
		for _, s := range specs {
			if s.Pipeline.Strategy == config.Budget && budgetHolds(s) != int64(s.Pipeline.PartitionWorkers) {
				t.Errorf("%s: budget holds %d datasets, the file says pw=%d", s.Name, budgetHolds(s), s.Pipeline.PartitionWorkers)
			}
			if inPlay := s.Workload.Partitions * s.Workload.Concurrency; inPlay < 3*s.Pipeline.PartitionWorkers {
				t.Errorf("%s: %d partitions in play against pw=%d: too few to pile up", s.Name, inPlay, s.Pipeline.PartitionWorkers)
			}
		}
	})
	t.Run("gate-h200", func(t *testing.T) {
		specs, slow := byName("gate-h200"), byName("gate-h200-slow")
		base, twin := specs["slow21"], slow["slow21"]
		// The twin differs by one synthesis round alone, about 10% more
		// synthesis (a witness ~0.8 of a round's cost at 2^21).
		if twin.Workload.SynthesisRounds != base.Workload.SynthesisRounds+1 {
			t.Errorf("slow21: %d rounds, its twin %d: want one more", base.Workload.SynthesisRounds, twin.Workload.SynthesisRounds)
		}
		twin.Workload.SynthesisRounds = base.Workload.SynthesisRounds
		twin.Source, twin.File, twin.Description = base.Source, base.File, base.Description
		if !reflect.DeepEqual(base, twin) {
			t.Errorf("slow21 and its twin differ beyond the round:\n%+v\n%+v", base, twin)
		}
		for _, name := range []string{"synth23", "gpu22"} {
			if s := specs[name]; s.Backend != "cuda" || s.Workload.Proofs != 1 || s.Measure == spec.MeasureCold {
				t.Errorf("%s: want one warm proof on cuda: %+v", name, s)
			}
		}
	})
	t.Run("porep-h200", func(t *testing.T) {
		specs := byName("porep-h200")
		if len(specs) != 5 {
			t.Errorf("%d configurations, want 5", len(specs))
		}
		const hostMemory = 125 << 30
		for _, s := range specs {
			if s.Workload.Partitions != 10 || !s.Workload.Cached() || s.MemoryLimit >= hostMemory {
				t.Errorf("%s: want 10 partitions a proof from a cached witness under a limit short of the host: %+v", s.Name, s)
			}
			// Key, witness and the pool of the datasets worked on at
			// once stay resident: what every configuration starts at.
			key := groth16.KeyBytes(s.Workload.Circuit())
			pool := config.WarmPoolDatasets(s.Workload, s.Pipeline.Resolved(), 1) * datasetBytes(s)
			start := key + datasetBytes(s) + pool
			inPlay := int64(s.Workload.Partitions*s.Workload.Concurrency) * datasetBytes(s)
			switch s.Pipeline.Strategy {
			case config.Release:
				// The wall: every partition in play alive passes the limit.
				if key+inPlay <= s.MemoryLimit {
					t.Errorf("%s: %s in play: release cannot reach its limit %s", s.Name, formatBytes(key+inPlay), formatBytes(s.MemoryLimit))
				}
			default:
				if start > s.MemoryLimit*9/10 {
					t.Errorf("%s: starts at %s, too near its limit %s", s.Name, formatBytes(start), formatBytes(s.MemoryLimit))
				}
			}
		}
		if n := budgetHolds(specs["budget"]); n != 7 {
			t.Errorf("budget holds %d datasets, the file says 7", n)
		}
	})
	t.Run("bias-h200", func(t *testing.T) {
		cal, pred := byName("bias-h200-cal"), byName("bias-h200")
		// The calibration: both sizes with rounds and without (the
		// two-term synthesis law), 1, 3 and 6 synthesizing at once.
		rounds, workers := map[int]map[int]bool{}, map[int]bool{}
		for _, s := range cal {
			w := s.Workload
			if s.Backend != "cuda" || w.Cached() || w.Proofs != 1 || w.Partitions != 6 || s.Repeats < 6 {
				t.Errorf("%s: want 6 repetitions of one computed proof of 6 partitions on cuda: %+v", s.Name, s)
			}
			if rounds[w.Constraints] == nil {
				rounds[w.Constraints] = map[int]bool{}
			}
			rounds[w.Constraints][w.SynthesisRounds] = true
			workers[s.Pipeline.PartitionWorkers] = true
		}
		if len(rounds) != 2 || len(rounds[1<<21]) != 2 || len(rounds[1<<22]) != 2 || !rounds[1<<22][0] || !rounds[1<<22][1] {
			t.Errorf("calibration sizes and rounds %v: want 2^21 and 2^22, each with rounds 0 and 1", rounds)
		}
		if !workers[1] || !workers[3] || !workers[6] {
			t.Errorf("calibration pw %v: want 1, 3 and 6", workers)
		}
		// The predicted configurations: one size the calibration never
		// ran, above it; one computed proof of 6 with one round.
		if len(pred) != 4 {
			t.Errorf("%d configurations, want 4", len(pred))
		}
		for _, s := range pred {
			w := s.Workload
			if w.Constraints != 1<<24 || rounds[w.Constraints] != nil || w.Cached() || w.SynthesisRounds != 1 || w.Proofs != 1 || w.Partitions != 6 {
				t.Errorf("%s: want one computed proof of 6 partitions of 2^24, one round: %+v", s.Name, s)
			}
			// Every partition alive beside the key stays under the limit.
			if worst := groth16.KeyBytes(w.Circuit()) + int64(w.Partitions)*datasetBytes(s); worst > s.MemoryLimit*9/10 {
				t.Errorf("%s: worst case %s, too near its limit %s", s.Name, formatBytes(worst), formatBytes(s.MemoryLimit))
			}
		}
		if h := pred["hold-cpw"].Pipeline; h.ChannelCapacity != h.PartitionWorkers {
			t.Errorf("hold-cpw: channel %d, pw %d: the file says C = pw", h.ChannelCapacity, h.PartitionWorkers)
		}
		if n := budgetHolds(pred["budget"]); n != 3 {
			t.Errorf("budget holds %d datasets, the file says 3", n)
		}
	})
	t.Run("bias-h200-cal-r4", func(t *testing.T) {
		// bias-h200-cal's shapes, and sharing measured at 2^23 too: all
		// six at once and two at a time, one round.
		cal, r4 := byName("bias-h200-cal"), byName("bias-h200-cal-r4")
		for name, s := range cal {
			if got, ok := r4[name]; !ok || got.Workload != s.Workload || got.Pipeline != s.Pipeline {
				t.Errorf("%s: want bias-h200-cal's shape unchanged", name)
			}
		}
		workers := map[int]bool{}
		for _, s := range r4 {
			w := s.Workload
			if s.Backend != "cuda" || w.Cached() || w.Proofs != 1 || w.Partitions != 6 || s.Repeats != 5 {
				t.Errorf("%s: want 5 repetitions of one computed proof of 6 partitions on cuda: %+v", s.Name, s)
			}
			if w.Constraints == 1<<23 {
				if w.SynthesisRounds != 1 {
					t.Errorf("%s: %d rounds, want 1", s.Name, w.SynthesisRounds)
				}
				workers[s.Pipeline.PartitionWorkers] = true
			}
		}
		if len(r4) != len(cal)+2 || !workers[6] || !workers[2] {
			t.Errorf("%d shapes, pw at 2^23 %v: want bias-h200-cal's and two at 2^23, pw 6 and 2", len(r4), workers)
		}
	})
	for _, test := range []struct {
		file, calibration string
		constraints       int
		budget            int64 // datasets
	}{
		{"bias-h200-r2", "bias-h200-cal", 1 << 23, 3},
		{"bias-h200-r3", "bias-h200-cal", 1 << 24, 3},
		{"bias-h200-r4", "bias-h200-cal-r4", 1 << 24, 3},
	} {
		t.Run(test.file, func(t *testing.T) {
			cal, pred := byName(test.calibration), byName(test.file)
			calibrated := map[[2]int]bool{} // constraints, rounds
			for _, s := range cal {
				calibrated[[2]int{s.Workload.Constraints, s.Workload.SynthesisRounds}] = true
			}
			// A size and a number of rounds the calibration never ran,
			// the same four strategies as bias-h200.
			if len(pred) != 4 {
				t.Errorf("%d configurations, want 4", len(pred))
			}
			for _, s := range pred {
				w := s.Workload
				if w.Constraints != test.constraints || w.SynthesisRounds != 2 || w.Cached() || w.Proofs != 1 || w.Partitions != 6 || s.Repeats != 3 {
					t.Errorf("%s: want 3 repetitions of one computed proof of 6 partitions of 2^%d, two rounds: %+v", s.Name, bits.TrailingZeros(uint(test.constraints)), s)
				}
				for c := range calibrated {
					if c[0] == w.Constraints || c[1] == w.SynthesisRounds {
						t.Errorf("%s: the calibration ran 2^%d with %d rounds: want a size and rounds it never ran", s.Name, bits.TrailingZeros(uint(c[0])), c[1])
					}
				}
				if worst := groth16.KeyBytes(w.Circuit()) + int64(w.Partitions)*datasetBytes(s); worst > s.MemoryLimit*9/10 {
					t.Errorf("%s: worst case %s, too near its limit %s", s.Name, formatBytes(worst), formatBytes(s.MemoryLimit))
				}
			}
			if h := pred["hold-cpw"].Pipeline; h.ChannelCapacity != h.PartitionWorkers {
				t.Errorf("hold-cpw: channel %d, pw %d: the file says C = pw", h.ChannelCapacity, h.PartitionWorkers)
			}
			if n := budgetHolds(pred["budget"]); n != test.budget {
				t.Errorf("budget holds %d datasets, the file says %d", n, test.budget)
			}
		})
	}
	t.Run("gpu", func(t *testing.T) {
		specs := byName("gpu")
		if len(specs) != 6 {
			t.Errorf("%d configurations, want 6", len(specs))
		}
		const hostMemory, gpuMemory = 128 << 30, 139 << 30
		for _, s := range specs {
			if s.Backend != "cuda" || s.Key != groth16.KindRandom || s.Verify {
				t.Errorf("%s: want cuda with a random key, unverified: %+v", s.Name, s)
			}
			// The worst case, every partition in play alive at once plus
			// the key, must fit under the limit, and the limit under the
			// host's memory.
			key := int64(9 << 30)
			worst := int64(s.Workload.Partitions*s.Workload.Concurrency)*datasetBytes(s) + key
			if worst > s.MemoryLimit || s.MemoryLimit >= hostMemory {
				t.Errorf("%s: worst case %s, limit %s, host %s", s.Name, formatBytes(worst), formatBytes(s.MemoryLimit), formatBytes(hostMemory))
			}
			if s.Pipeline.Strategy == config.Budget && budgetHolds(s) != int64(s.Pipeline.PartitionWorkers) {
				t.Errorf("%s: budget holds %d datasets, the file says pw=%d", s.Name, budgetHolds(s), s.Pipeline.PartitionWorkers)
			}
			// The GPU holds the key, the precomputed bases of the full
			// MSMs (8 multiples of 2^25 G1 points) and, per worker, a
			// partition's a/b/c and wires at most.
			const precomputed = 8 * (1 << 25) * 96
			if onGPU := key + precomputed + int64(s.Pipeline.GPUWorkers)*datasetBytes(s); onGPU > gpuMemory/2 {
				t.Errorf("%s: %s on the GPU", s.Name, formatBytes(onGPU))
			}
		}
	})
	t.Run("peer-gnark", func(t *testing.T) {
		data, err := Embedded.ReadFile("peer-gnark.yaml")
		if err != nil {
			t.Fatal(err)
		}
		gpu := applyHeaderSed(t, string(data))
		specs, err := LoadBytes("peer-gnark-cuda.yaml", []byte(gpu))
		if err != nil || len(specs) != 2 {
			t.Fatalf("the header's GPU recipe: %d configurations, %v; want provebench and gnark", len(specs), err)
		}
		// On the H200 ICICLE's CUDA MSM needs the peer's launches to
		// block (docs/results/peer-h200); on the CPU nothing changes.
		for _, s := range specs {
			if s.Backend != "cuda" || s.Workload.Constraints != 1<<20 || s.Vars["peer"] != "bin/peer-gnark-cuda" {
				t.Errorf("GPU recipe, %s: backend %s, 2^%d constraints, peer %q", s.Name, s.Backend, log2(s.Workload.Constraints), s.Vars["peer"])
			}
			if s.Exec != nil && s.Exec.Env["CUDA_LAUNCH_BLOCKING"] != "1" {
				t.Errorf("GPU recipe, %s: exec env %v, want CUDA_LAUNCH_BLOCKING=1", s.Name, s.Exec.Env)
			}
		}
		for _, s := range byName("peer-gnark") {
			if s.Backend != "cpu" || s.Workload.Constraints != 1<<12 {
				t.Errorf("%s: backend %s, %d constraints: want the CPU at 2^12", s.Name, s.Backend, s.Workload.Constraints)
			}
			if s.Exec != nil && s.Exec.Env["CUDA_LAUNCH_BLOCKING"] != "" {
				t.Errorf("%s: CUDA_LAUNCH_BLOCKING set on the CPU", s.Name)
			}
		}
	})
	t.Run("issue 43 at 2^26", func(t *testing.T) {
		const gib = 1 << 30
		gate := byName("gate-h200-26")
		big := gate["big26"]
		if (datasetBytes(big)+gib/2)/gib != 8 || big.Pipeline.PartitionWorkers != 2 || big.Pipeline.ChannelCapacity != 1 {
			t.Errorf("gate-h200-26 big26: %+v, the file says hold pw=2 C=1 at 2^26", big.Pipeline)
		}
		for file, wantGiB := range map[string]int64{"frozen-h200-26": 8, "frozen-h200-24": 2, "frozen-h200-cal": 1} {
			depths := map[string]bool{}
			for _, s := range byName(file) {
				if (datasetBytes(s)+gib/2)/gib != wantGiB || s.Workload.Synthesis != "cached" {
					t.Errorf("%s %s: a dataset of %d bytes from %q synthesis, the file says %d GiB from a cached witness", file, s.Name, datasetBytes(s), s.Workload.Synthesis, wantGiB)
				}
				if s.Workload == big.Workload && s.Pipeline == big.Pipeline {
					t.Errorf("%s %s is the gate's big26, whose runs calibrate the test: it would be judged in-sample", file, s.Name)
				}
				depths[fmt.Sprintf("%s/%d", s.Pipeline.Strategy, s.Pipeline.ChannelCapacity)] = true
			}
			if file == "frozen-h200-cal" {
				continue
			}
			for _, want := range []string{"hold/1", "hold/2", "release/1", "release/2"} {
				if !depths[want] {
					t.Errorf("%s lacks %s: the test needs hold and release at both channel depths", file, want)
				}
			}
		}
		workers := map[int]bool{}
		for _, s := range byName("frozen-h200-cal") {
			workers[s.Pipeline.PartitionWorkers] = true
		}
		if len(workers) != 4 {
			t.Errorf("frozen-h200-cal measures copies at %v at once, the file says 1, 2, 3 and 4", workers)
		}
		for _, s := range byName("heldout-h200-23") {
			if (datasetBytes(s)+gib/2)/gib != 1 || s.Workload.Proofs != 2 {
				t.Errorf("heldout-h200-23 %s: %d bytes a dataset, %d proofs; the file says 1 GiB and 2 proofs", s.Name, datasetBytes(s), s.Workload.Proofs)
			}
		}
		second := byName("frozen-h200-23")
		if n := budgetHolds(second["budget-early"]); n != 3 {
			t.Errorf("frozen-h200-23 budget-early holds %d datasets, the file says 3", n)
		}
	})
}

// applyHeaderSed applies the sed expressions of a scenario file's header
// comment (lines "#   sed -e 's|A|B|' ...") to the file, each A taken as
// a literal string, as sed takes the header's: it fails the test when the
// header has none or one of them matches nothing outside the comments.
func applyHeaderSed(t *testing.T, doc string) string {
	t.Helper()
	var body, head []string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "#") {
			head = append(head, line)
		} else {
			body = append(body, line)
		}
	}
	exprs := regexp.MustCompile(`-e 's\|([^|]*)\|([^|]*)\|'`).FindAllStringSubmatch(strings.Join(head, "\n"), -1)
	if len(exprs) == 0 {
		t.Fatal("no sed expressions in the header")
	}
	out := strings.Join(body, "\n")
	for _, e := range exprs {
		if !strings.Contains(out, e[1]) {
			t.Errorf("the header's sed: %q matches nothing", e[1])
		}
		out = strings.ReplaceAll(out, e[1], e[2])
	}
	return out
}

// TestErrorPositionsAreInTheFile guards the promise that every problem
// names a real place: for a file full of mistakes, every error's line
// exists and its path names a key written on that line (or the scenario
// it belongs to).
func TestErrorPositionsAreInTheFile(t *testing.T) {
	doc := header + `defaults:
  repeats: x
  workload: {constraints: 3, bogus: 1}
scenarios:
  - name: a
    pipeline: {strategy: budget, budget: 1B, pacer: {kp: -1}}
  - name: b
    sample_interval: 1h1
matrix:
  - name: m
    axes:
      pipeline.channel_capacity: [0, 1]
      key: [setup, rnd]
`
	lines := strings.Split(doc, "\n")
	ident := regexp.MustCompile(`[a-z_]+`)
	for _, e := range loadErrors(t, doc) {
		if e.Line < 1 || e.Line > len(lines) || e.Column < 1 {
			t.Errorf("%v: no such position", e)
			continue
		}
		ids := ident.FindAllString(e.Path, -1)
		if len(ids) == 0 || !strings.Contains(lines[e.Line-1], ids[len(ids)-1]) && !strings.Contains(lines[e.Line-1], "- name:") {
			t.Errorf("%v: line %d (%q) does not hold %s", e, e.Line, lines[e.Line-1], e.Path)
		}
	}
}

// aliasMatrices is a document of n matrices that share, through a YAML
// alias, one axes block of seeds*10 points: a few kilobytes that name
// n*seeds*10 configurations.
func aliasMatrices(n, seeds int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nmatrix:\n  - name: m0\n    axes: &ax\n      workload.synthesis_rounds: {from: 1, to: %d, step: 1}\n      repeats: {from: 1, to: 10, step: 1}\n", seeds)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: m%d, axes: *ax}\n", i)
	}
	return b.String()
}

// TestConfigurationCap: a load defines at most maxConfigurations, counted
// across matrices (and files) before any point is built, so an alias bomb
// is refused at the matrix that passes the cap, in little time and memory.
func TestConfigurationCap(t *testing.T) {
	es := loadErrors(t, aliasMatrices(3, 400)) // 3 x 4000 points
	if len(es) != 1 || es[0].Error() != "test.yaml:8:5: matrix[2]: 12000 configurations so far, more than the 10000 one load may define; split the sweep or run its files apart" {
		t.Errorf("three matrices of 4000 points: %v", es)
	}
	load(t, aliasMatrices(2, 500)) // exactly the cap

	doc := aliasMatrices(100, 1000) // 1,000,000 configurations in ~3 KB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	es = loadErrors(t, doc)
	runtime.ReadMemStats(&after)
	if len(es) != 1 || !strings.Contains(es[0].Error(), "test.yaml:7:5: matrix[1]: 20000 configurations so far") {
		t.Errorf("alias bomb: %v", es)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("refusing %d bytes of aliases allocated %d MiB", len(doc), alloc>>20)
	}

	// The cap spans the files of one load.
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte(aliasMatrices(1, 600)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(a, b); err == nil || !strings.Contains(err.Error(), "b.yaml:3:5: matrix[0]: 12000 configurations so far") {
		t.Errorf("two files of 6000 configurations: %v", err)
	}
}

// TestListAxisCap: a list axis holds at most maxAxisValues values, as a
// range does, before its values are read.
func TestListAxisCap(t *testing.T) {
	vals := make([]string, maxAxisValues+1)
	for i := range vals {
		vals[i] = strconv.Itoa(i + 1)
	}
	es := loadErrors(t, "version: 1\nmatrix:\n  - name: m\n    axes: {workload.seed: ["+strings.Join(vals, ", ")+"]}\n")
	if len(es) != 1 || !strings.Contains(es[0].Error(), "test.yaml:4:27: matrix[0].axes[workload.seed]: 1001 values: more than 1000 in one axis") {
		t.Errorf("got %v", es)
	}
}

// Issue 41: benchstat on the quickstart's results.bench gave "± ∞ need
// >= 6 samples" at 5 repeats; every quickstart configuration measures at
// least 6.
func TestQuickstartRepeatsEnoughForBenchstat(t *testing.T) {
	specs, err := LoadEmbedded("quickstart")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Repeats < 6 {
			t.Errorf("quickstart %s repeats %d times: benchstat needs 6 for an interval", s.Name, s.Repeats)
		}
	}
}
