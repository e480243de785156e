package simulate

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
	var lx, ly []float64
	for i := range xs {
		if xs[i] > 0 && ys[i] > 0 {
			lx = append(lx, math.Log(xs[i]))
			ly = append(ly, math.Log(ys[i]))
		}
	}
	if len(lx) == 0 {
		return PowerLaw{}, fmt.Errorf("no positive points to fit")
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

// fitRoundsLaw fits y = (a + b·r)·n^e, a partition's synthesis alone at n
// constraints and r synthesis rounds (the witness, then r rounds over it:
// two costs that grow alike with the size, in a ratio of their own), by
// least squares on relative errors: for each exponent on a grid the best
// a and b are linear. withRounds false fixes b at 0 (a cached witness does
// none of the rounds); with it, points that all have 0 rounds leave b
// unknown, returned as NaN. One distinct size fixes e at 1, as fitPowerLaw does.
func fitRoundsLaw(ns, rs, ys []float64, withRounds bool) (alone, perRound PowerLaw, err error) {
	var sizes = map[float64]bool{}
	roundsSeen := false
	for i := range ns {
		if ns[i] <= 0 || ys[i] <= 0 {
			return alone, perRound, fmt.Errorf("point %d: size %v and time %v must be positive", i, ns[i], ys[i])
		}
		sizes[ns[i]] = true
		roundsSeen = roundsSeen || rs[i] > 0
	}
	if len(ns) == 0 {
		return alone, perRound, fmt.Errorf("no points to fit")
	}
	unknown := withRounds && !roundsSeen
	withRounds = withRounds && roundsSeen
	// relErr is the least sum of squared relative errors at exponent e,
	// with its a and b.
	relErr := func(e float64) (sse, a, b float64) {
		// Residual i: (a·u_i + b·v_i) - 1, with u = n^e/y, v = r·n^e/y.
		var suu, suv, svv, su, sv float64
		for i := range ns {
			u := math.Pow(ns[i], e) / ys[i]
			v := rs[i] * u
			suu, suv, svv, su, sv = suu+u*u, suv+u*v, svv+v*v, su+u, sv+v
		}
		a, b = su/suu, 0
		if withRounds {
			if det := suu*svv - suv*suv; det > 1e-12*suu*svv {
				a, b = (su*svv-sv*suv)/det, (suu*sv-suv*su)/det
			}
			if b < 0 || a <= 0 { // a round cannot cost less than nothing
				a, b = su/suu, 0
			}
		}
		for i := range ns {
			d := (a+b*rs[i])*math.Pow(ns[i], e)/ys[i] - 1
			sse += d * d
		}
		return sse, a, b
	}
	e := 1.0
	if len(sizes) > 1 {
		best := math.Inf(1)
		for k := 500; k <= 1500; k += 2 {
			if sse, _, _ := relErr(float64(k) / 1000); sse < best {
				best, e = sse, float64(k)/1000
			}
		}
	}
	_, a, b := relErr(e)
	alone = PowerLaw{A: a, B: e}
	perRound = PowerLaw{A: b, B: e}
	if unknown {
		perRound.A = math.NaN()
	}
	return alone, perRound, nil
}
