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

// CostLaw is a device stage's cost against the size x: Fixed + PerUnit ·
// work(x), where the work is x (a copy, an MSM's bucket passes), x·log2(x)
// (an NTT), or x^Exponent with no fixed cost (a power law, whose exponent
// folds a fixed cost's share, shrinking with the size, into the growth).
// Which of the three a stage follows is not assumed: fitStageLaw keeps the
// one that, fitted on the calibration's smaller sizes, predicts its
// largest best.
type CostLaw struct {
	Fixed    float64 `json:"fixed,omitempty"`
	PerUnit  float64 `json:"per_unit"`
	Work     string  `json:"work"`
	Exponent float64 `json:"exponent,omitempty"`
}

// The work a CostLaw grows with.
const (
	WorkLinear = "x"
	WorkNLogN  = "x·log2(x)"
	WorkPower  = "x^b"
)

func (l CostLaw) work(x float64) float64 {
	switch l.Work {
	case WorkNLogN:
		if x > 1 {
			return x * math.Log2(x)
		}
		return x
	case WorkPower:
		return math.Pow(x, l.Exponent)
	}
	return x
}

// At evaluates the law.
func (l CostLaw) At(x float64) float64 { return l.Fixed + l.PerUnit*l.work(x) }

func (l CostLaw) String() string {
	if l.Work == WorkPower {
		return PowerLaw{A: l.PerUnit, B: l.Exponent}.String()
	}
	return fmt.Sprintf("%.4g + %.4g · %s", l.Fixed, l.PerUnit, l.Work)
}

// fitStageLaw fits a device stage's law: with three sizes or more, each
// form (WorkPower, WorkLinear, WorkNLogN) is fitted on the sizes below the
// largest and scored by its error there (mean squared log ratio); the
// best is fitted again on every size. Ties go to the earlier form. With
// fewer sizes nothing can be checked, and the law is a power law.
func fitStageLaw(xs, ys []float64) (CostLaw, error) {
	largest, sizes := 0.0, map[float64]bool{}
	for i, x := range xs {
		if x > 0 && ys[i] > 0 {
			largest, sizes[x] = max(largest, x), true
		}
	}
	form := WorkPower
	if len(sizes) >= 3 {
		var sx, sy, lx, ly []float64
		for i, x := range xs {
			if x < largest {
				sx, sy = append(sx, x), append(sy, ys[i])
			} else {
				lx, ly = append(lx, x), append(ly, ys[i])
			}
		}
		best := math.Inf(1)
		for _, f := range []string{WorkPower, WorkLinear, WorkNLogN} {
			law, err := fitForm(sx, sy, f)
			if err != nil {
				return CostLaw{}, err
			}
			var sse float64
			for i := range lx {
				if ly[i] > 0 {
					d := math.Log(law.At(lx[i]) / ly[i])
					sse += d * d
				}
			}
			if sse < best*(1-1e-9) {
				best, form = sse, f
			}
		}
	}
	return fitForm(xs, ys, form)
}

func fitForm(xs, ys []float64, form string) (CostLaw, error) {
	if form == WorkPower {
		p, err := fitPowerLaw(xs, ys)
		return CostLaw{PerUnit: p.A, Work: WorkPower, Exponent: p.B}, err
	}
	return fitCostLaw(xs, ys, form)
}

// fitCostLaw fits Fixed + PerUnit·work(x) to the positive points by least
// squares on the relative error ((law − y)/y), so that the small sizes
// count as much as the large. A fixed cost fitted below zero, or one
// distinct x, leaves the work alone (Fixed 0), the only law that a single
// size or a cost growing faster than the work allows.
func fitCostLaw(xs, ys []float64, work string) (CostLaw, error) {
	law := CostLaw{Work: work}
	// Normal equations of min Σ (c/y + d·w/y − 1)².
	var s00, s01, s11, t0, t1 float64
	n := 0
	for i := range xs {
		if xs[i] <= 0 || ys[i] <= 0 {
			continue
		}
		a, b := 1/ys[i], law.work(xs[i])/ys[i]
		s00, s01, s11, t0, t1 = s00+a*a, s01+a*b, s11+b*b, t0+a, t1+b
		n++
	}
	if n == 0 {
		return law, fmt.Errorf("no positive points to fit")
	}
	if det := s00*s11 - s01*s01; det > 1e-9*s00*s11 {
		law.Fixed, law.PerUnit = (t0*s11-t1*s01)/det, (s00*t1-s01*t0)/det
		if law.Fixed >= 0 && law.PerUnit > 0 {
			return law, nil
		}
	}
	return CostLaw{PerUnit: t1 / s11, Work: work}, nil
}
