package predict

import (
	"math"
	"strings"
	"testing"
)

func TestMSMWorkIsTheBucketMethodsCount(t *testing.T) {
	// 2^14 points: window 11, (16384 + 2048) / 11 operations a bit; 2^12:
	// windows 9 and 10 tie at 512.
	for _, c := range []struct{ n, want float64 }{{1 << 14, 18432.0 / 11}, {1 << 12, 512}} {
		if got := msmWork(c.n); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("msmWork(%g) = %g, want %g", c.n, got, c.want)
		}
	}
}

func TestMSMLawGoesThroughTheMeasurement(t *testing.T) {
	law, err := msmLawThrough(1<<14, 0.4)
	if err != nil {
		t.Fatal(err)
	}
	if got := law.At(1 << 14); math.Abs(got/0.4-1) > 1e-9 {
		t.Errorf("at the calibrated size %g, want 0.4", got)
	}
	if law.Work != WorkPower || law.Exponent <= 0.8 || law.Exponent >= 0.95 {
		t.Errorf("law %+v, want a power law of the bucket method's exponent, below 1 (0.8-0.95 around 2^14)", law)
	}
}

func TestOneSizeHostProverTakesTheMSMLaw(t *testing.T) {
	ms, err := Load(t.Context(), []string{cpuPredict}, LoadOptions{}) // 2^15 only, the CPU backend
	if err != nil {
		t.Fatal(err)
	}
	m, err := ms.Fit(ms.Points)
	if err != nil {
		t.Fatal(err)
	}
	if m.Finalize.Exponent >= 1 || m.GPUStart.Exponent != 1 {
		t.Errorf("exponents: finalize %.3f (want the MSM law's, below 1), gpu_start %.3f (want 1)", m.Finalize.Exponent, m.GPUStart.Exponent)
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "its MSMs' law at one size (2^15) follows the bucket method's count") {
		t.Errorf("notes %q", m.Notes)
	}
}
