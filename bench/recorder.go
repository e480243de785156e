package bench

import (
	"time"

	"github.com/provebench/provebench/bench/results"
)

// recorder accumulates the samples of one repetition. Rows are stamped with
// the parent's clock and put on the pipeline's time axis (t = 0 when the
// child reported ready) once that moment is known.
type recorder struct {
	interval time.Duration
	gpu      bool

	at       []time.Time
	rss      []uint64
	gpuProc  []uint64
	gpuDev   []uint64
	gpuUtil  []float64
	counters [][]int64 // per row: the latest values streamed by the child

	peakRSS, peakGPUProc, peakGPUDev uint64
	gpuUtilSum                       float64
	gpuSamples                       int
}

func newRecorder(interval time.Duration, gpu bool) *recorder {
	return &recorder{interval: interval, gpu: gpu}
}

func (r *recorder) add(at time.Time, rss uint64, g *GPUReading, counters []int64) {
	r.at = append(r.at, at)
	r.rss = append(r.rss, rss)
	r.peakRSS = max(r.peakRSS, rss)
	r.counters = append(r.counters, counters)
	if !r.gpu {
		return
	}
	var gr GPUReading
	if g != nil {
		gr = *g
		r.gpuUtilSum += g.Utilization
		r.gpuSamples++
	}
	r.gpuProc = append(r.gpuProc, gr.ProcessBytes)
	r.gpuDev = append(r.gpuDev, gr.DeviceBytes)
	r.gpuUtil = append(r.gpuUtil, gr.Utilization)
	r.peakGPUProc = max(r.peakGPUProc, gr.ProcessBytes)
	r.peakGPUDev = max(r.peakGPUDev, gr.DeviceBytes)
}

// series builds the columnar series with t0 as time zero. Counter columns
// hold, for each row, the latest values the child had streamed (0 before
// the first).
func (r *recorder) series(t0 time.Time, names []string) *results.Series {
	s := &results.Series{
		IntervalSeconds: r.interval.Seconds(),
		T:               make([]float64, len(r.at)),
		RSSBytes:        r.rss,
	}
	for i, at := range r.at {
		s.T[i] = at.Sub(t0).Seconds()
	}
	if r.gpu {
		s.GPUMemoryBytes, s.GPUDeviceMemoryBytes, s.GPUUtilization = r.gpuProc, r.gpuDev, r.gpuUtil
	}
	if len(names) > 0 {
		s.Counters = make(map[string][]int64, len(names))
		for j, name := range names {
			col := make([]int64, len(r.at))
			for i, row := range r.counters {
				if j < len(row) {
					col[i] = row[j]
				}
			}
			s.Counters[name] = col
		}
	}
	return s
}

// steadyBusyFraction is the devices' busy fraction between 10% and 90% of
// the partitions done, from the sampled cumulative busy time; 0 when the
// series is too short to tell.
func steadyBusyFraction(s *results.Series, partitions, devices int) float64 {
	done, busy := s.Counters["partitions_done"], s.Counters[seriesDeviceBusy]
	if done == nil || busy == nil || partitions < 5 || devices < 1 {
		return 0
	}
	lo, hi := -1, -1
	for i, d := range done {
		if lo < 0 && d*10 >= int64(partitions) {
			lo = i
		}
		if hi < 0 && d*10 >= int64(partitions)*9 {
			hi = i
		}
	}
	if lo < 0 || hi <= lo {
		return 0
	}
	span := s.T[hi] - s.T[lo]
	if span <= 0 {
		return 0
	}
	return float64(busy[hi]-busy[lo]) / 1000 / span / float64(devices)
}
