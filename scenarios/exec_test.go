package scenarios

import (
	"strings"
	"testing"
	"time"
)

const execDoc = header + `defaults:
  vars: {pw: 4, capacity: 1}
  exec:
    command: [cuzk-bench, batch, --config, "{{.Dir}}/cuzk.toml"]
    env: {RUST_LOG: info}
    files:
      - path: cuzk.toml
        content: "partition_workers = {{.Vars.pw}}\n"
    daemon: {command: [cuzk, --config, "{{.Dir}}/cuzk.toml"], ready_url: "http://127.0.0.1:9820/status", ready_timeout: 30s}
    timeline: true
    proofs: 1
    rules:
      - {match: '\[RSS\] (?P<job>\S+) (?P<value>[0-9.]+) GiB', action: set, counter: rss_label_bytes, scale: 1073741824}
    status: {url: "http://127.0.0.1:9820/status", interval: 500ms, counters: {/memory/used_bytes: memory_used_bytes}}
    prometheus: {url: "http://127.0.0.1:9820/metrics", counters: {cuzk_buffers: buffers}}
scenarios:
  - name: one
    vars: {pw: 8}
matrix:
  - name: sweep
    axes:
      vars.pw: [2, 10]
      vars.capacity: [1, 10]
`

func TestExecScenarios(t *testing.T) {
	specs := load(t, execDoc)
	if len(specs) != 5 {
		t.Fatalf("%d specs, want 5", len(specs))
	}
	one := specs[0]
	if one.Exec == nil || one.Vars["pw"] != "8" || one.Vars["capacity"] != "1" {
		t.Fatalf("one: exec %v vars %v", one.Exec, one.Vars)
	}
	e := one.Exec
	if e.Command[3] != "{{.Dir}}/cuzk.toml" || e.Env["RUST_LOG"] != "info" || e.Daemon.ReadyTimeout != 30*time.Second ||
		!e.Timeline || e.Proofs != 1 || e.Rules[0].Scale != 1<<30 || e.Status.Interval != 500*time.Millisecond ||
		e.Prometheus.Interval != time.Second || e.Prometheus.Counters["cuzk_buffers"] != "buffers" || e.StopGrace != 5*time.Second {
		t.Errorf("exec %+v", e)
	}
	if specs[4].Name != "sweep/pw=10/capacity=10" || specs[4].Vars["pw"] != "10" || specs[4].Labels["vars.capacity"] != "10" {
		t.Errorf("last point %s vars %v labels %v", specs[4].Name, specs[4].Vars, specs[4].Labels)
	}
	if errs := schemaOf(t).validate(execDoc); len(errs) > 0 {
		t.Errorf("the schema refuses a valid exec document: %v", errs)
	}
}

func TestExecErrors(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"scenarios:\n  - name: a\n    exec: {comand: [x]}\n", "test.yaml:4:12: scenarios[0].exec.comand: unknown field (did you mean command?)"},
		{"scenarios:\n  - name: a\n    exec: {env: {A: b}}\n", "test.yaml:4:11: scenarios[0].exec.command: missing"},
		{"scenarios:\n  - name: a\n    exec: {command: []}\n", "scenarios[0].exec.command: empty"},
		{"scenarios:\n  - name: a\n    exec: {command: ['{{.Vars.x']}\n", "scenarios[0].exec: template: exec.command[0]"},
		{"scenarios:\n  - name: a\n    exec: {command: [x], rules: [{match: '(', counter: c}]}\n", "scenarios[0].exec.rules[0].match: error parsing regexp"},
		{"scenarios:\n  - name: a\n    exec: {command: [x], rules: [{match: 'x', action: set, counter: c}]}\n", "needs a (?P<value>...) group"},
		{"scenarios:\n  - name: a\n    exec: {command: [x], stop_grace: soon}\n", "scenarios[0].exec.stop_grace: \"soon\": want a duration"},
		{"scenarios:\n  - name: a\n    vars: {9lives: 1}\n", "scenarios[0].vars.9lives: \"9lives\": a variable name"},
		{"matrix:\n  - name: m\n    axes: {vars.x: [1, 1]}\n", "repeats the value"},
		// Issue 20 item 16: a memory limit no process tree fits in.
		{"scenarios:\n  - name: a\n    memory_limit: 1B\n    exec: {command: [x]}\n", "scenarios[0].memory_limit: 1B is less than 4MiB, below what any process tree needs"},
	}
	for _, tt := range tests {
		es := loadErrors(t, header+tt.doc)
		if !strings.Contains(es.Error(), tt.want) {
			t.Errorf("%s\ngot  %v\nwant %s", tt.doc, es, tt.want)
		}
	}
}

// Issue 32 item 14: a field that does nothing on the exec configurations
// it reaches is refused where it is written: the built-in pipeline's
// settings (measure, key, verify, devices) always, workload, pipeline and
// backend unless a template reads them. A value shared with a built-in
// configuration does something there and stands.
func TestExecIdleFields(t *testing.T) {
	refused := []struct{ doc, want string }{
		{"scenarios:\n  - name: a\n    measure: cold\n    exec: {command: [x]}\n",
			"test.yaml:4:14: scenarios[0].measure: does nothing on an exec configuration, which runs its command, not the built-in pipeline"},
		{"scenarios:\n  - name: a\n    workload: {synthesis: cached}\n    exec: {command: [x, '{{.Workload.Constraints}}']}\n",
			"test.yaml:4:27: scenarios[0].workload.synthesis: does nothing on an exec configuration: no template of its exec block reads {{.Workload.Synthesis}}"},
		{"scenarios:\n  - name: a\n    pipeline: {gpu_workers: 2}\n    exec: {command: [x]}\n", "{{.Pipeline.GPUWorkers}}"},
		{"defaults:\n  key: random\nscenarios:\n  - name: a\n    exec: {command: [x]}\n", "test.yaml:3:8: defaults.key: does nothing on an exec configuration"},
		{"matrix:\n  - name: m\n    base: {exec: {command: [x]}}\n    axes: {measure: [warm, cold]}\n", "test.yaml:5:28: matrix[0].axes[measure][1]: does nothing on an exec configuration"},
	}
	for _, tt := range refused {
		es := loadErrors(t, header+tt.doc)
		if !strings.Contains(es.Error(), tt.want) {
			t.Errorf("%s\ngot  %v\nwant %s", tt.doc, es, tt.want)
		}
	}
	for _, doc := range []string{
		// Read by a template: the field itself, or the struct that holds it.
		"scenarios:\n  - name: a\n    workload: {synthesis: cached, seed: 3}\n    exec: {command: [x, '{{.Workload.Synthesis}}', '{{$.Workload.Seed}}']}\n",
		"scenarios:\n  - name: a\n    pipeline: {gpu_workers: 2, pacer: {kp: 0.5}}\n    exec: {command: [x], env: {P: '{{with .Pipeline}}{{.GPUWorkers}}{{end}}'}}\n",
		"scenarios:\n  - name: a\n    backend: cpu\n    exec: {command: [x], files: [{path: f, content: '{{.}}'}]}\n",
		// Shared with a built-in configuration, which uses it.
		"defaults:\n  measure: cold\n  key: random\n  workload: {synthesis: cached}\nscenarios:\n  - name: built-in\n  - name: a\n    exec: {command: [x]}\n",
		// What the exec driver reads.
		"scenarios:\n  - name: a\n    repeats: 2\n    warmups: 0\n    timeout: 1m\n    sample_interval: 5ms\n    memory_limit: 1GiB\n    exec: {command: [x]}\n",
	} {
		load(t, header+doc)
	}
}
