package supervise

import (
	"testing"
	"time"
)

// Issue 20 item 12: failed GPU samples are absent, not 0; no peak without a sample;
// an unknown per-process figure stays unknown.
func TestGPUSamplesAbsentNotZero(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	r := NewRecorder(time.Millisecond, true)
	r.Add(time.Now(), 1, nil, nil, 0)
	r.Add(time.Now(), 1, nil, nil, 0)
	if p, d, m := r.GPUPeaks(); p != nil || d != nil || m != nil {
		t.Fatal("GPU peaks without any sample")
	}
	if s := r.Series(time.Now(), nil); s.GPUMemoryBytes != nil || s.GPUDeviceMemoryBytes != nil {
		t.Fatal("GPU columns without any sample")
	}
	r.Add(time.Now(), 1, &GPUReading{ProcessBytes: nil, DeviceBytes: 5 << 20, Utilization: 0.5}, nil, 0)
	p, d, m := r.GPUPeaks()
	if p != nil || d == nil || *d != 5<<20 || m == nil || *m != 0.5 {
		t.Fatalf("peaks %v %v %v", p, d, m)
	}
	r.Add(time.Now(), 1, &GPUReading{ProcessBytes: u(3 << 20), DeviceBytes: 4 << 20}, nil, 0)
	s := r.Series(time.Now(), nil)
	if len(s.GPUDeviceMemoryBytes) != 4 || s.GPUDeviceMemoryBytes[0] != nil || *s.GPUDeviceMemoryBytes[2] != 5<<20 {
		t.Fatalf("device column %v", s.GPUDeviceMemoryBytes)
	}
	if len(s.GPUMemoryBytes) != 4 || s.GPUMemoryBytes[2] != nil || *s.GPUMemoryBytes[3] != 3<<20 {
		t.Fatalf("process column %v", s.GPUMemoryBytes)
	}
	if p, _, _ := r.GPUPeaks(); p == nil || *p != 3<<20 {
		t.Fatalf("process peak %v", p)
	}
}
