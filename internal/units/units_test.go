package units

import "testing"

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
