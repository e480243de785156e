package run

import (
	"slices"
	"time"

	"github.com/provebench/provebench/results"
)

// recorder accumulates the samples of one repetition. Rows are stamped with
// the parent's clock and put on the pipeline's time axis (t = 0 when the
// child reported ready) once that moment is known.
type recorder struct {
	interval time.Duration
	gpu      bool

	at       []time.Time
	rss      []uint64
	gpuProc  []*uint64 // nil where the sample failed or the figure is unknown
	gpuDev   []*uint64
	gpuUtil  []*float64
	counters [][]int64 // per row: the latest values streamed by the child
	countT   []float64 // per row: the child's timestamp of those values

	peakRSS, peakGPUProc, peakGPUDev uint64
	gpuUtilSum                       float64
	gpuSamples                       int // samples NVML took
	gpuProcSamples                   int // of them, with a per-process figure
}

func newRecorder(interval time.Duration, gpu bool) *recorder {
	return &recorder{interval: interval, gpu: gpu}
}

func (r *recorder) add(at time.Time, rss uint64, g *GPUReading, counters []int64, countersT float64) {
	r.at = append(r.at, at)
	r.countT = append(r.countT, countersT)
	r.rss = append(r.rss, rss)
	r.peakRSS = max(r.peakRSS, rss)
	r.counters = append(r.counters, counters)
	if !r.gpu {
		return
	}
	if g == nil { // the sample failed: absent, not 0
		r.gpuProc = append(r.gpuProc, nil)
		r.gpuDev = append(r.gpuDev, nil)
		r.gpuUtil = append(r.gpuUtil, nil)
		return
	}
	r.gpuSamples++
	r.gpuUtilSum += g.Utilization
	dev, util := g.DeviceBytes, g.Utilization
	r.gpuDev = append(r.gpuDev, &dev)
	r.gpuUtil = append(r.gpuUtil, &util)
	r.peakGPUDev = max(r.peakGPUDev, dev)
	r.gpuProc = append(r.gpuProc, g.ProcessBytes)
	if g.ProcessBytes != nil {
		r.gpuProcSamples++
		r.peakGPUProc = max(r.peakGPUProc, *g.ProcessBytes)
	}
}

// gpuPeaks returns the GPU figures of the repetition: each nil when no
// sample had it.
func (r *recorder) gpuPeaks() (proc, dev *uint64, util *float64) {
	if r.gpuProcSamples > 0 {
		proc = &r.peakGPUProc
	}
	if r.gpuSamples > 0 {
		dev = &r.peakGPUDev
		u := r.gpuUtilSum / float64(r.gpuSamples)
		util = &u
	}
	return proc, dev, util
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
	if r.gpu && r.gpuSamples > 0 {
		s.GPUDeviceMemoryBytes, s.GPUUtilization = r.gpuDev, r.gpuUtil
		if r.gpuProcSamples > 0 {
			s.GPUMemoryBytes = r.gpuProc
		}
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
// the partitions done: the growth of their busy time over the growth of the
// device time it covers (gpu.DeviceStats.Span), both as the child streamed
// them, so the fraction is on the devices' own clock and cannot pass 100%
// however late a backend credits its work; false when the run is too short,
// or sampled too coarsely, to tell.
func (r *recorder) steadyBusyFraction(names []string, partitions int) (float64, bool) {
	iDone, iBusy, iSpan := slices.Index(names, "partitions_done"), slices.Index(names, seriesDeviceBusy), slices.Index(names, seriesDeviceSpan)
	if iDone < 0 || iBusy < 0 || iSpan < 0 || partitions < 5 {
		return 0, false
	}
	lo, hi := -1, -1
	for i, row := range r.counters {
		if len(row) != len(names) {
			continue
		}
		d := row[iDone]
		if lo < 0 && d*10 >= int64(partitions) {
			lo = i
		}
		if hi < 0 && d*10 >= int64(partitions)*9 {
			hi = i
		}
	}
	if lo < 0 || hi <= lo {
		return 0, false
	}
	span := r.counters[hi][iSpan] - r.counters[lo][iSpan]
	if span <= 0 {
		return 0, false
	}
	return float64(r.counters[hi][iBusy]-r.counters[lo][iBusy]) / float64(span), true
}
