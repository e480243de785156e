package predict

import (
	"fmt"
	"math"
)

// PowerLaw is y = A·x^B, fitted by least squares on logarithms: stage
// costs grow as a power of the size (NTT as n log n, MSMs a little under
// n, synthesis as n), and a power law fits each over the sizes calibrated
// without choosing a shape per stage.
type PowerLaw struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// At evaluates the law.
func (p PowerLaw) At(x float64) float64 { return p.A * math.Pow(x, p.B) }

func (p PowerLaw) String() string { return fmt.Sprintf("%.4g · x^%.3f", p.A, p.B) }

// fitPowerLaw fits y = A·x^B to positive points. One distinct x fixes B at
// 1 (proportional), the only guess a single size allows.
func fitPowerLaw(xs, ys []float64) (PowerLaw, error) {
	lx, ly, err := logPoints(xs, ys)
	if err != nil {
		return PowerLaw{}, err
	}
	mx, my := mean(lx), mean(ly)
	var sxx, sxy float64
	for i := range lx {
		sxx += (lx[i] - mx) * (lx[i] - mx)
		sxy += (lx[i] - mx) * (ly[i] - my)
	}
	b := 1.0
	if sxx > 1e-9 {
		b = sxy / sxx
	}
	return PowerLaw{A: math.Exp(my - b*mx), B: b}, nil
}

// fitProportional fits y = A·x to positive points (B fixed at 1), by least
// squares on logarithms as fitPowerLaw: A is the geometric mean of y/x.
func fitProportional(xs, ys []float64) (PowerLaw, error) {
	lx, ly, err := logPoints(xs, ys)
	if err != nil {
		return PowerLaw{}, err
	}
	var sum float64
	for i := range lx {
		sum += ly[i] - lx[i]
	}
	return PowerLaw{A: math.Exp(sum / float64(len(lx))), B: 1}, nil
}

// logPoints is the logarithms of the points whose x and y are positive,
// the only ones a law on logarithms can fit.
func logPoints(xs, ys []float64) (lx, ly []float64, err error) {
	for i := range xs {
		if xs[i] > 0 && ys[i] > 0 {
			lx = append(lx, math.Log(xs[i]))
			ly = append(ly, math.Log(ys[i]))
		}
	}
	if len(lx) == 0 {
		return nil, nil, fmt.Errorf("no positive points to fit")
	}
	return lx, ly, nil
}

// Linear is y = C + D·x.
type Linear struct {
	C float64 `json:"c"`
	D float64 `json:"d"`
}

// At evaluates the line.
func (l Linear) At(x float64) float64 { return l.C + l.D*x }

// fitLinear fits y = C + D·x; one distinct x gives a constant.
func fitLinear(xs, ys []float64) Linear {
	if len(xs) == 0 {
		return Linear{}
	}
	mx, my := mean(xs), mean(ys)
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx < 1e-9 {
		return Linear{C: my}
	}
	d := sxy / sxx
	return Linear{C: my - d*mx, D: d}
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
