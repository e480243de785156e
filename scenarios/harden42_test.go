package scenarios

import (
	"strings"
	"testing"
)

// Issue 42 cases 1 and 7: validate renders every exec template against the
// configuration's own data, bounded, and refuses at the string's line what
// would fail (or never end) every repetition: an unknown field, a call of
// nothing, an empty program, a template past its bounds; and, as it reads
// them, env names execve cannot pass and YAML tags the format gives no
// meaning.
func TestExecDryRun(t *testing.T) {
	refused := []struct{ doc, want string }{
		{"scenarios:\n  - name: a\n    exec: {command: [echo, '{{.Nope}}']}\n",
			"test.yaml:4:28: scenarios[0].exec.command[1]: renders with this configuration's data to an error"},
		{"scenarios:\n  - name: a\n    exec: {command: [echo, '{{call .Nope}}']}\n", "scenarios[0].exec.command[1]: renders"},
		{"scenarios:\n  - name: a\n    exec: {command: ['']}\n", "test.yaml:4:22: scenarios[0].exec.command[0]: renders to an empty program name"},
		{"scenarios:\n  - name: a\n    exec: {command: ['{{if false}}x{{end}}', y]}\n", "scenarios[0].exec.command[0]: renders to an empty program name"},
		{"scenarios:\n  - name: a\n    exec:\n      command: [cat, f]\n      files:\n        - path: f\n          content: '{{range 3000}}{{printf \"%0999999d\" 0}}{{end}}'\n",
			"test.yaml:8:20: scenarios[0].exec.files[0].content: renders with this configuration's data to an error"},
		{"scenarios:\n  - name: a\n    exec: {command: [x, '{{range 100000000000}}{{end}}x']}\n", "more than 250000 loop iterations"},
		{"scenarios:\n  - name: a\n    exec: {command: [x], env: {\"A=B\": c}}\n", "test.yaml:4:32: scenarios[0].exec.env.A=B: an environment variable's name may not be empty or hold '='"},
		{"scenarios:\n  - name: a\n    exec: {command: [x], env: {\"A\\0B\": c}}\n", "may not be empty or hold '=' or a NUL byte"},
		{"scenarios:\n  - name: a\n    exec: {command: [x], env: {A: \"b\\0c\"}}\n", "scenarios[0].exec.env.A: a NUL byte"},
		{"scenarios:\n  - name: a\n    pipeline: !hold {strategy: hold}\n", "test.yaml:4:15: YAML tag !hold"},
		{"defaults:\n  exec: {command: ['{{.Vars.x}}']}\nscenarios:\n  - name: a\n    vars: {x: ''}\n", "defaults.exec.command[0]: renders to an empty program name"},
	}
	for _, tt := range refused {
		es := loadErrors(t, header+tt.doc)
		if !strings.Contains(es.Error(), tt.want) {
			t.Errorf("%s\ngot  %v\nwant %s", tt.doc, es, tt.want)
		}
	}
	// Templates that render are accepted as before, tags the core schema
	// names too.
	for _, doc := range []string{
		"scenarios:\n  - name: a\n    vars: {x: echo}\n    exec: {command: ['{{.Vars.x}}', '{{.Dir}}/f', '{{.Repetition}}']}\n",
		"scenarios:\n  - name: a\n    repeats: !!int 3\n    exec: {command: [x], env: {A: b}}\n",
	} {
		load(t, header+doc)
	}
}
