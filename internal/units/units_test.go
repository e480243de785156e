package units

import (
	"encoding/json"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1536: "1.50 KiB", 3 << 29: "1.50 GiB", 512 << 20: "512 MiB", 20 << 30: "20.0 GiB",
		1048475: "1.00 MiB", 10234: "9.99 KiB", 10235: "10.0 KiB", 46346000000: "43.2 GiB", -1536: "-1.50 KiB",
	} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	if FormatCount(1<<20) != "2^20" || FormatCount(1000) != "1000" || FormatCount(512) != "512" {
		t.Error("FormatCount")
	}
}

func TestDurationJSON(t *testing.T) {
	b, err := json.Marshal(struct{ T Duration }{Duration(2 * time.Minute)})
	if err != nil || string(b) != `{"T":"2m0s"}` {
		t.Fatalf("marshal: %s, %v", b, err)
	}
	for in, want := range map[string]time.Duration{`"2m0s"`: 2 * time.Minute, `"10ms"`: 10 * time.Millisecond, `120000000000`: 2 * time.Minute} {
		var d Duration
		if err := json.Unmarshal([]byte(in), &d); err != nil || time.Duration(d) != want {
			t.Errorf("unmarshal %s = %v, %v; want %v", in, time.Duration(d), err, want)
		}
	}
	for _, bad := range []string{`"2 minutes"`, `1.5`, `true`} {
		var d Duration
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("unmarshal %s: no error", bad)
		}
	}
}

func TestFormatSeconds(t *testing.T) {
	for v, want := range map[float64]string{0: "0 s", 2.851: "2.85 s", 0.5233: "523 ms", 5.676e-6: "5.68 µs", 0.01: "10.0 ms", 125: "125 s", 0.9999: "1.00 s"} {
		if got := FormatSeconds(v); got != want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 configurations", 1: "1 configuration", 2: "2 configurations"} {
		if got := Plural(n, "configuration"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestNoun(t *testing.T) {
	for n, want := range map[int]string{0: "regressions", 1: "regression", 2: "regressions"} {
		if got := Noun(n, "regression"); got != want {
			t.Errorf("Noun(%d) = %q, want %q", n, got, want)
		}
	}
}
