package scenarios

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/spec"
)

// roundTrip writes each spec and loads the file back: the same spec, by the
// same name.
func roundTrip(t *testing.T, specs []spec.Spec) {
	t.Helper()
	if len(specs) == 0 {
		t.Fatal("no configuration to round-trip")
	}
	for i := range specs {
		want := specs[i]
		data, err := Marshal(&want, "written by a test\nsecond line")
		if err != nil {
			t.Fatalf("Marshal(%s): %v", want.Name, err)
		}
		back, err := LoadBytes("back.yaml", data)
		if err != nil || len(back) != 1 {
			t.Fatalf("%s: the written file loads as %d specs, %v\n%s", want.Name, len(back), err, data)
		}
		got := back[0]
		if got.Source != "back.yaml:4" && got.Source != "back.yaml:5" {
			t.Errorf("%s: source %s", want.Name, got.Source)
		}
		got.Source, got.File = want.Source, want.File
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: written and read back as\n  %+v\nwant\n  %+v\n%s", want.Name, got, want, data)
		}
		if !strings.HasPrefix(string(data), "# written by a test\n# second line\n") {
			t.Errorf("%s: the comment does not head the file:\n%s", want.Name, data)
		}
	}
}

// Every field away from its default, so a getter that reads the wrong
// field cannot pass.
const everyField = `version: 1
scenarios:
  - name: every-field
    description: "every field: set"
    backend: cuda
    devices: 2
    key: random
    verify: false
    repeats: 3
    warmups: 2
    sample_interval: 20ms
    timeout: 7m30s
    memory_limit: 48GiB
    measure: cold
    vars: {who: "12", tag: x y}
    workload: {constraints: 2^22, partitions: 10, proofs: 3, concurrency: 2, synthesis_rounds: 7, bit_fraction: 0.75, seed: 18446744073709551615, synthesis: cached}
    pipeline:
      strategy: hold+budget+pacer
      partition_workers: 6
      channel_capacity: 3
      early_free: true
      gpu_workers: 2
      synthesis_workers: 5
      budget: 1536MiB
      pacer: {target_depth: 1.5, kp: 0.25, ki: 0.125, interval: 150ms, max_in_flight: 9}
    simulate:
      synthesis: 45s
      synthesis_spread: 10s
      gpu_start: 900ms
      upload: 100ms
      finalize: 920ms
      abc_bytes: 12GiB
      wire_bytes: 4GB
      synthesis_bytes: 1000
      device_serial: true
      device_ready: 8s
      submit_queue: 1
      pin_stall: 300ms
      pageable_upload: 2200ms
      host: {memory: 512GiB, baseline: 69GiB, pooled_bytes: 64GiB, cores: 96, synthesis_contention: 0.38, devices: 2, gpu_speed: 1.5}
`

func TestMarshalEveryField(t *testing.T) {
	specs := load(t, everyField)
	roundTrip(t, specs)
	def := load(t, header+"scenarios: [{name: a}]\n")[0]
	for _, f := range fields {
		if reflect.DeepEqual(f.get(&specs[0]), f.get(&def)) {
			t.Errorf("%s: the test leaves it at its default", f.path)
		}
	}
}

func TestMarshalMatrixPoints(t *testing.T) {
	specs := load(t, header+`defaults: {key: random, workload: {constraints: 2^24}}
matrix:
  - name: sweep
    description: budgets
    base: {pipeline: {strategy: budget+pacer}}
    axes:
      pipeline.budget: {from: 4GiB, to: 6GiB, step: 512MiB}
      pipeline.pacer.target_depth: {from: 1, to: 4, times: 2}
      vars.note: [a, b]
  - name: names
    axes:
      pipeline.partition_workers: [4]
      workload.partitions: [4]
`)
	if len(specs) != 31 {
		t.Fatalf("%d points", len(specs))
	}
	roundTrip(t, specs)
	data, err := Marshal(&specs[9], "") // budget 4608MiB, depth 2, note b
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  - name: sweep\n", "      pipeline.budget: [4608MiB]\n", "      pipeline.pacer.target_depth: [2]\n", "      vars.note: [b]\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("no %q in\n%s", want, data)
		}
	}
}

// Every embedded file's configurations round-trip, qualified names too.
func TestMarshalEmbedded(t *testing.T) {
	for _, name := range EmbeddedNames() {
		specs, err := LoadEmbedded(name)
		if err != nil {
			t.Fatal(err)
		}
		specs = slices.DeleteFunc(specs, func(s spec.Spec) bool { return s.IsExec() })
		roundTrip(t, specs)
	}
}

func TestMarshalRefusesExec(t *testing.T) {
	specs, err := LoadEmbedded("exec-provebench")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(specs, func(s spec.Spec) bool { return s.IsExec() })
	if i < 0 {
		t.Fatal("exec-provebench has no exec scenario")
	}
	if _, err := Marshal(&specs[i], ""); err == nil || !strings.Contains(err.Error(), "external command") {
		t.Errorf("Marshal of an exec scenario: %v", err)
	}
}
