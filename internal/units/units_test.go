package units

import "testing"

func TestParseCount(t *testing.T) {
	for in, want := range map[string]int64{"2^20": 1 << 20, " 2^0 ": 1, "1024": 1024, "0": 0} {
		got, err := ParseCount(in)
		if err != nil || got != want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "3^2", "2^63", "2^", "1e3", "1.5", "abc"} {
		if _, err := ParseCount(in); err == nil {
			t.Errorf("ParseCount(%q) succeeded", in)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"16GiB": 16 << 30, "512MiB": 512 << 20, "1.5GiB": 3 << 29, "1KB": 1000, "2GB": 2e9,
		"100B": 100, "2^30": 1 << 30, "4096": 4096, "0": 0, "1 GiB": 1 << 30,
	} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1GiB", "16gib", "16 GiBs", "1e400GiB"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", in)
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.50 KiB", 3 << 29: "1.50 GiB", 512 << 20: "512 MiB", 20 << 30: "20.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	if FormatCount(1<<20) != "2^20" || FormatCount(1000) != "1000" || FormatCount(512) != "512" {
		t.Error("FormatCount")
	}
}
