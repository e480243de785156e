package predict

import (
	"math"
	"testing"
)

func TestFitPowerLawRecoversTheLaw(t *testing.T) {
	xs := []float64{1 << 10, 1 << 14, 1 << 18}
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = 3e-6 * math.Pow(x, 1.1)
	}
	p, err := fitPowerLaw(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(p.B-1.1) <= 1e-9 && math.Abs(p.A/3e-6-1) <= 1e-9) { // NaN fails too
		t.Errorf("fit %v, want 3e-06 · x^1.1", p)
	}
	one, _ := fitPowerLaw([]float64{100, 100}, []float64{2, 4})
	if one.B != 1 {
		t.Errorf("one size: exponent %v, want 1 (proportional)", one.B)
	}
	if l := fitLinear([]float64{1, 2, 3}, []float64{5, 7, 9}); l.C != 3 || l.D != 2 {
		t.Errorf("linear fit %+v", l)
	}
}

func TestFrontAndBest(t *testing.T) {
	cs := []Candidate{
		{Name: "fast-big", SecondsPerProof: 10, PeakRSS: 500},
		{Name: "slow-small", SecondsPerProof: 20, PeakRSS: 100},
		{Name: "dominated", SecondsPerProof: 25, PeakRSS: 200},
		{Name: "mid", SecondsPerProof: 15, PeakRSS: 300},
		{Name: "oom", SecondsPerProof: 5, PeakRSS: 50, OOM: true},
	}
	front := Front(cs)
	var names []string
	for _, c := range front {
		names = append(names, c.Name)
	}
	if len(names) != 3 || names[0] != "slow-small" || names[1] != "mid" || names[2] != "fast-big" {
		t.Errorf("front %v", names)
	}
	if b, ok := Best(cs, 350); !ok || b.Name != "mid" {
		t.Errorf("best under 350: %v %v", b.Name, ok)
	}
	if _, ok := Best(cs, 10); ok {
		t.Error("a best under a cap nothing fits")
	}
}
