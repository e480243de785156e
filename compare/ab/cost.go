package ab

import (
	"fmt"
	"time"

	"github.com/provebench/provebench/gpu/catalog"
	"github.com/provebench/provebench/results"
)

// Cost is what a verdict cost: the time the comparison held the machine
// (and its GPUs), against the windows its repetitions measured, and the
// setups the sides paid.
type Cost struct {
	// Wall is the comparison's time from its first repetition's start to
	// its end; on a GPU host every GPU is held for all of it.
	Wall time.Duration
	// GPUs is the number of GPUs the sides' configurations used (0 on
	// the CPU backend).
	GPUs int
	// Pairs counts the measured pairs, over every configuration.
	Pairs int
	// Windows is the measured repetitions' wall time, both sides, warm-ups
	// included (they hold the machine too).
	Windows time.Duration
	// Setups counts the prover setups paid (one per process), and
	// SetupTime their time.
	Setups    int
	SetupTime time.Duration
}

// CostOf reads what a comparison's two documents cost.
func CostOf(base, cur *results.Run, wall time.Duration) Cost {
	c := Cost{Wall: wall}
	for _, doc := range []*results.Run{base, cur} {
		if doc == nil {
			continue
		}
		c.GPUs = max(c.GPUs, gpusUsed(doc))
		for i := range doc.Scenarios {
			for j := range doc.Scenarios[i].Repetitions {
				rep := &doc.Scenarios[i].Repetitions[j]
				c.Windows += seconds(rep.WallSeconds)
				if rep.SetupSeconds != nil {
					c.Setups++
					c.SetupTime += seconds(*rep.SetupSeconds)
				}
				if doc == cur && rep.Measured() {
					c.Pairs++
				}
			}
		}
	}
	return c
}

// gpusUsed is how many GPUs a document's CUDA configurations ran on.
func gpusUsed(doc *results.Run) int {
	for i := range doc.Scenarios {
		if catalog.OnGPU(doc.Scenarios[i].Backend) {
			return max(len(doc.Environment.GPUs), 1)
		}
	}
	return 0
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// String says it in a line: "verdict cost 5m12s of wall time (312
// GPU-seconds), 40 pairs: 7.8 s a pair, 1.25x its measured windows; 4
// setups (31 s)".
func (c Cost) String() string {
	held := ""
	if c.GPUs > 0 {
		held = fmt.Sprintf(" (%.0f GPU-seconds held)", c.Wall.Seconds()*float64(c.GPUs))
	}
	s := fmt.Sprintf("verdict cost %s of wall time%s", c.Wall.Round(time.Second), held)
	if c.Pairs > 0 {
		s += fmt.Sprintf(", %d pairs: %.1f s a pair", c.Pairs, c.Wall.Seconds()/float64(c.Pairs))
	}
	if c.Windows > 0 {
		s += fmt.Sprintf(", %.2fx the measured windows (%s)", c.Wall.Seconds()/c.Windows.Seconds(), c.Windows.Round(time.Second))
	}
	return s + fmt.Sprintf("; %d setups paid (%s)", c.Setups, c.SetupTime.Round(time.Second))
}
