package compare

import (
	"math"

	"github.com/provebench/provebench/internal/stats"
)

// OutlierZ is the modified Z-score beyond which a repetition is flagged as
// an outlier: Iglewicz and Hoaglin's 3.5, as hyperfine uses.
const OutlierZ = 3.5

// outliers returns the positions of the values whose modified Z-score,
// 0.6745 (x - median) / MAD, exceeds OutlierZ in magnitude, with the
// scores. A sample whose median absolute deviation is zero (more than half
// the values equal) has no outliers by this rule.
func outliers(vals []float64) (idx []int, z []float64) {
	if len(vals) < 3 {
		return nil, nil
	}
	med := stats.Median(vals)
	dev := make([]float64, len(vals))
	for i, v := range vals {
		dev[i] = math.Abs(v - med)
	}
	mad := stats.Median(dev)
	if mad == 0 {
		return nil, nil
	}
	for i, v := range vals {
		if s := 0.6745 * (v - med) / mad; math.Abs(s) > OutlierZ {
			idx = append(idx, i)
			z = append(z, s)
		}
	}
	return idx, z
}
