package scenarios

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string // substring of the error; "" means success
	}{
		{"0", 0, ""},
		{"1024", 1024, ""},
		{"2^0", 1, ""},
		{"2^20", 1 << 20, ""},
		{"2^62", 1 << 62, ""},
		{"1B", 1, ""},
		{"512MiB", 512 << 20, ""},
		{"16GiB", 16 << 30, ""},
		{"1KiB", 1024, ""},
		{"2TiB", 2 << 40, ""},
		{"1PiB", 1 << 50, ""},
		{"0.5GiB", 1 << 29, ""},
		{"1.5GiB", 3 << 29, ""},
		{"1.5GB", 1_500_000_000, ""},
		{"100kB", 100_000, ""},
		{"2MB", 2_000_000, ""},
		{"3TB", 3_000_000_000_000, ""},
		{"1PB", 1_000_000_000_000_000, ""},
		{"0GiB", 0, ""},
		{"8191PiB", 8191 << 50, ""},

		{"", 0, "empty"},
		{"-1", 0, "negative"},
		{"-1GiB", 0, "negative"},
		{"16 GiB", 0, "without a space"},
		{"16G", 0, `"G" is ambiguous`},
		{"16K", 0, `"K" is ambiguous: write KiB`},
		{"16KB", 0, `"KB" is ambiguous`},
		{"16Gi", 0, `"Gi" is ambiguous`},
		{"16gib", 0, "case-sensitive; did you mean GiB"},
		{"16gb", 0, "did you mean GB"},
		{"16XB", 0, `unknown unit "XB"`},
		{"0.3B", 0, "not a whole number of bytes"},
		{"0.1KiB", 0, "not a whole number of bytes"},
		{"1.5", 0, "want bytes"},
		{"2^63", 0, "exponent must be 0..62"},
		{"2^100", 0, "want bytes"},
		{"9223372036854775808", 0, "too large"},
		{"8192PiB", 0, "too large"},
		{"1e9", 0, "unknown unit"},
		{"0x10", 0, "unknown unit"},
		{"01", 0, "want bytes"},
		{"GiB", 0, "want bytes"},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseSize(%q): %v", tt.in, err)
		case tt.wantErr == "" && got != tt.want:
			t.Errorf("ParseSize(%q) = %d, want %d", tt.in, got, tt.want)
		case tt.wantErr != "" && err == nil:
			t.Errorf("ParseSize(%q) = %d, want an error containing %q", tt.in, got, tt.wantErr)
		case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
			t.Errorf("ParseSize(%q): %v, want it to contain %q", tt.in, err, tt.wantErr)
		}
		// The schema's pattern must accept exactly the forms ParseSize
		// reads (ParseSize alone bounds the value).
		if matched := regexp.MustCompile(sizePattern).MatchString(tt.in); matched != (tt.wantErr == "") &&
			!strings.Contains(tt.wantErr, "too large") && !strings.Contains(tt.wantErr, "whole number") && !strings.Contains(tt.wantErr, "exponent") {
			t.Errorf("sizePattern matches %q: %v, but ParseSize error is %q", tt.in, matched, tt.wantErr)
		}
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"2^14", 1 << 14, true},
		{"2^0", 1, true},
		{"16384", 16384, true},
		{"0", 0, true},
		{"-3", -3, true}, // the field's limits reject it, not the syntax
		{"2^63", 0, false},
		{"2 ^14", 0, false},
		{"2**14", 0, false},
		{"16k", 0, false},
		{"1.0", 0, false},
		{"", 0, false},
		{"99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseCount(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// The schema checks durations with a pattern; the loader calls
// time.ParseDuration. They must agree on every form.
func TestDurationPatternMatchesParseDuration(t *testing.T) {
	re := regexp.MustCompile(durationPattern)
	for _, s := range []string{
		"0", "1ns", "1us", "1µs", "1μs", "500ms", "10s", "10m", "2h", "1m30s", "1h2m3s4ms",
		"1.5s", ".5s", "1.s", "+1s", "-1s", "0s", "00s",
		"", "1", "10", "s", "1 s", "1sec", "1d", "1.5", "ms", "1s ", ".s", "1..5s", "0.0", "--1s", "1e3s",
	} {
		_, err := time.ParseDuration(s)
		if got := re.MatchString(s); got != (err == nil) {
			t.Errorf("%q: durationPattern matches: %v; time.ParseDuration: %v", s, got, err)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0:          "0B",
		1000:       "1000B",
		1024:       "1KiB",
		3 << 29:    "1536MiB",
		2 << 30:    "2GiB",
		131040:     "131040B (~128KiB)",
		1<<31 - 32: "2147483616B (~2GiB)",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
