package scenarios

import (
	"regexp"
	"testing"
)

// positioned is how every problem starts: file:line:col.
var positioned = regexp.MustCompile(`^fuzz\.yaml:[1-9][0-9]*:[1-9][0-9]*: `)

// FuzzLoad feeds the loader arbitrary documents (seeds: testdata/fuzz and
// the embedded files). Whatever the input, it must not panic, and it must
// either return configurations that hold together or problems that each
// name the file and say what is wrong.
func FuzzLoad(f *testing.F) {
	for _, name := range EmbeddedNames() {
		data, err := Embedded.ReadFile(name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, err := LoadBytes("fuzz.yaml", data)
		if err != nil {
			es, ok := err.(Errors)
			if !ok || len(es) == 0 {
				t.Fatalf("error of type %T: %v", err, err)
			}
			for _, e := range es {
				if e.File != "fuzz.yaml" || e.Msg == "" || e.Line < 1 || e.Column < 1 || !positioned.MatchString(e.Error()) {
					t.Fatalf("malformed problem %#v", e)
				}
			}
			return
		}
		if len(specs) == 0 {
			t.Fatal("no error and no configuration")
		}
		names := make(map[string]bool)
		for _, s := range specs {
			if s.Name == "" || names[s.Name] {
				t.Fatalf("name %q empty or repeated", s.Name)
			}
			names[s.Name] = true
			if s.Repeats < 1 || s.Warmups < 0 || s.SampleInterval <= 0 || s.Timeout <= 0 || s.SampleInterval > s.Timeout {
				t.Fatalf("%s: accepted repeats %d, warm-ups %d, interval %s, timeout %s", s.Name, s.Repeats, s.Warmups, s.SampleInterval, s.Timeout)
			}
			if err := s.Workload.Validate(); err != nil {
				t.Fatalf("%s: accepted a workload the engine refuses: %v", s.Name, err)
			}
			if err := s.Pipeline.Resolved().Validate(s.Workload); err != nil {
				t.Fatalf("%s: accepted a pipeline the engine refuses: %v", s.Name, err)
			}
		}
	})
}
