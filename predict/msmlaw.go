package predict

import (
	"fmt"
	"math"
	"math/bits"
)

// The CPU backend's MSMs are gnark-crypto's bucket method, which picks its
// window c among these to make (n + 2^c)/c least: its own count of group
// operations (per scalar bit) for n points.
const (
	msmMinWindow = 4
	msmMaxWindow = 16
)

// msmWork is that count for n points: what an MSM's time follows when the
// per-operation cost holds.
func msmWork(n float64) float64 {
	least := math.Inf(1)
	for c := msmMinWindow; c <= msmMaxWindow; c++ {
		least = min(least, (n+math.Exp2(float64(c)))/float64(c))
	}
	return least
}

// msmSpan is how far, as a factor either side, the power law through
// msmWork is fitted around the calibrated size: the sizes a prediction
// from one size reaches.
const msmSpan = 16

// msmLawThrough is the MSMs' law of a host prover calibrated at one size:
// the power law that msmWork follows from n/msmSpan to n·msmSpan, through
// the time y measured at n. Proportional costs are the only guess one size
// allows for the other stages; for the MSMs the algorithm says more: its
// windows widen with n, so the work grows slower than n (docs/simulate.md,
// Limits, sets it beside what the CPU prover measured).
func msmLawThrough(n, y float64) (CostLaw, error) {
	var xs, ys []float64
	for x := n / msmSpan; x <= n*msmSpan; x *= 2 {
		xs, ys = append(xs, x), append(ys, msmWork(x))
	}
	law, err := fitPowerLaw(xs, ys)
	if err != nil {
		return CostLaw{}, err
	}
	return CostLaw{PerUnit: y / math.Pow(n, law.B), Work: WorkPower, Exponent: law.B}, nil
}

// msmLawNote says what a one-size host-prover calibration assumed of the
// MSMs.
func msmLawNote(constraints int, law CostLaw) string {
	return fmt.Sprintf("the prover runs on the host's cores: its MSMs' law at one size (2^%d) follows the bucket method's count of group operations (n^%.3f around that size) rather than the constraints",
		bits.Len(uint(constraints))-1, law.Exponent)
}
