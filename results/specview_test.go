package results

import (
	"testing"
	"time"
)

// A scenario without a spec has an empty view; one whose spec is not a
// JSON object is an error; the user's text stays text where a setting's
// duration becomes nanoseconds.
func TestDecodeSpec(t *testing.T) {
	for _, raw := range []string{"", "null", " \n"} {
		v, err := (&Scenario{Spec: []byte(raw)}).DecodeSpec()
		if err != nil || len(v.Settings) != 0 || v.MemoryLimit != 0 {
			t.Errorf("spec %q: %+v, %v", raw, v, err)
		}
	}
	for _, raw := range []string{"[1]", `"x"`, "{"} {
		if _, err := (&Scenario{Name: "s", Spec: []byte(raw)}).DecodeSpec(); err == nil {
			t.Errorf("spec %q decoded", raw)
		}
	}
	v, err := (&Scenario{Spec: []byte(`{"name": "1h", "description": "5s", "labels": {"timeout": "2m"}, "timeout": "2m", "memory_limit": 1073741824, "exec": {"daemon": {"ready_timeout": "30s"}}}`)}).DecodeSpec()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"name": "1h", "description": "5s", "labels.timeout": "2m",
		"timeout": float64(2 * time.Minute), "exec.daemon.ready_timeout": float64(30 * time.Second),
	} {
		if got := v.Settings[path]; got != want {
			t.Errorf("%s: %#v, want %#v", path, got, want)
		}
	}
	if v.MemoryLimit != 1<<30 {
		t.Errorf("memory limit %d", v.MemoryLimit)
	}
}
