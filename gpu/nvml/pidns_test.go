package nvml

import "testing"

// Issue 13, item 12: the per-process figure is unknown, not 0, where NVML
// cannot see the process.
func TestProcessMemoryUnknown(t *testing.T) {
	seen := GPUSample{ProcessMemoryBytes: 7, Devices: []DeviceSample{{ProcessPresent: true, ProcessMemoryBytes: 7}, {}}}
	unseen := GPUSample{Devices: []DeviceSample{{}, {}}}
	unreported := GPUSample{ProcessMemoryUnknown: true, Devices: []DeviceSample{{ProcessPresent: true}}}
	for _, tc := range []struct {
		name   string
		s      GPUSample
		hidden bool
		want   int64 // -1: unknown
	}{
		{"listed", seen, false, 7},
		{"listed in a container", seen, true, 7},
		{"not listed on the host: none", unseen, false, 0},
		{"not listed in a container: unknown", unseen, true, -1},
		{"listed without a figure", unreported, false, -1},
	} {
		got := tc.s.ProcessMemory(tc.hidden)
		if (got == nil) != (tc.want < 0) || got != nil && int64(*got) != tc.want {
			t.Errorf("%s: got %v, want %d", tc.name, got, tc.want)
		}
	}
	t.Logf("this host hides processes from NVML: %v", ProcessesHidden())
}
