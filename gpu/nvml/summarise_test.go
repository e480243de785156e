package nvml

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSummarise(t *testing.T) {
	devs := []Device{{Index: 0, HasUtilization: true}, {Index: 1, HasUtilization: true}, {Index: 2}}
	for _, tc := range []struct {
		name    string
		samples []DeviceSample
		want    GPUSample
	}{
		{
			name: "process on no device: all devices",
			samples: []DeviceSample{
				{MemoryUsedBytes: 100, UtilizationPercent: 50},
				{MemoryUsedBytes: 200, UtilizationPercent: 10},
				{MemoryUsedBytes: 400},
			},
			want: GPUSample{DeviceMemoryBytes: 700, UtilizationPercent: 30, RunDevices: 3},
		},
		{
			name: "process on one device: that device",
			samples: []DeviceSample{
				{MemoryUsedBytes: 100, UtilizationPercent: 50},
				{MemoryUsedBytes: 200, ProcessMemoryBytes: 150, ProcessPresent: true, UtilizationPercent: 90},
				{MemoryUsedBytes: 400},
			},
			want: GPUSample{ProcessMemoryBytes: 150, DeviceMemoryBytes: 200, UtilizationPercent: 90, RunDevices: 1},
		},
		{
			name: "device without utilisation counts in memory only",
			samples: []DeviceSample{
				{MemoryUsedBytes: 100},
				{MemoryUsedBytes: 200, ProcessMemoryBytes: 20, ProcessPresent: true, UtilizationPercent: 40},
				{MemoryUsedBytes: 400, ProcessMemoryBytes: 30, ProcessPresent: true},
			},
			want: GPUSample{ProcessMemoryBytes: 50, DeviceMemoryBytes: 600, UtilizationPercent: 40, RunDevices: 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Stale totals from an earlier sample must not survive.
			s := GPUSample{ProcessMemoryBytes: 1, DeviceMemoryBytes: 1, UtilizationPercent: 1, RunDevices: 9, Devices: tc.samples}
			s.summarise(devs)
			s.Devices = nil
			if !reflect.DeepEqual(s, tc.want) {
				t.Errorf("got %+v, want %+v", s, tc.want)
			}
		})
	}
}

// TestOpenError checks the contract every build and host share: Open either
// works or fails with ErrUnavailable and a reason, and Describe says the same.
func TestOpenError(t *testing.T) {
	n, err := Open()
	if err == nil {
		n.Close()
		t.Skip("NVML is available here; see the GPU tests")
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open: %v, want an ErrUnavailable error", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, ErrUnavailable.Error()+": ") || len(msg) <= len(ErrUnavailable.Error())+2 {
		t.Errorf("Open error %q gives no reason", msg)
	}
	var sb strings.Builder
	if err := Describe(&sb); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Describe: %v, want an ErrUnavailable error", err)
	}
	if sb.Len() != 0 {
		t.Errorf("Describe wrote %q without NVML", sb.String())
	}
}

func BenchmarkOpenUnavailable(b *testing.B) {
	if n, err := Open(); err == nil {
		n.Close()
		b.Skip("NVML is available here")
	}
	for b.Loop() {
		if _, err := Open(); !errors.Is(err, ErrUnavailable) {
			b.Fatal(err)
		}
	}
}
