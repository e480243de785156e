package sample

import (
	"context"
	"runtime"
	"testing"
	"time"
)

func TestLoadMeter(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	m := StartLoad(context.Background())
	// Burn some CPU so the interval has ticks to divide.
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	h, err := m.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if !(h.Load1 >= 0 && h.StealFraction >= 0 && h.StealFraction <= 1) { // NaN fails too
		t.Fatalf("implausible load %+v", *h)
	}
}

// TestLoadMeterTellsOwnFromOthers: the CPU time of the measured processes
// is not counted as the neighbours'. Two meters over the same interval,
// one told this process's CPU time and one told nothing of it, while this
// process burns CPU: the first sees a smaller share of others than the
// second, by about what this process used.
func TestLoadMeterTellsOwnFromOthers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	ctx := context.Background()
	if _, ok := CPUSeconds(Self); !ok {
		t.Fatal("no CPU time of this process")
	}
	mine := StartLoadOf(ctx, func() (float64, bool) { return CPUSeconds(Self) })
	blind := StartLoadOf(ctx, func() (float64, bool) { return 0, true })
	start, _ := CPUSeconds(Self)
	for used := 0.0; used < 0.1; {
		now, _ := CPUSeconds(Self)
		used = now - start
	}
	hm, err := mine.Stop()
	if err != nil {
		t.Fatal(err)
	}
	hb, err := blind.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if hm.OthersCPUFraction == nil || hb.OthersCPUFraction == nil {
		t.Fatal("no neighbours' share measured")
	}
	m, b := *hm.OthersCPUFraction, *hb.OthersCPUFraction
	if !(m >= 0 && m <= 1 && b >= 0 && b <= 1) { // a NaN share fails too
		t.Fatalf("shares out of [0,1]: %v, %v", m, b)
	}
	if !(b > m) {
		t.Fatalf("others' share %v counting this process's 0.1 s of CPU as its own, %v counting it as others': want the second larger", m, b)
	}
	if _, ok := hm.Quiet(); !ok {
		t.Fatal("Quiet cannot judge a measured share")
	}
}
