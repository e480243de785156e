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
