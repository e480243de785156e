package supervise

import (
	"time"

	"github.com/provebench/provebench/results"
)

// GPUSampler reads GPU memory and utilisation for a process (NVML). The
// runner works without one: GPU figures are then recorded as absent.
type GPUSampler interface {
	Sample(pid int) (GPUReading, error)
}

// GPUReading is one GPU sample, summed over devices.
type GPUReading struct {
	// ProcessBytes is the memory the sampled process holds on all GPUs;
	// nil when that is unknown (NVML cannot see the process).
	ProcessBytes *uint64
	// DeviceBytes is the memory used on all devices, by anyone.
	DeviceBytes uint64
	// Utilization is the mean utilisation of the devices, 0..1.
	Utilization float64
}

// Recorder accumulates the samples of one repetition, for either driver.
// Rows are stamped with the parent's clock and put on the pipeline's time
// axis (t = 0 when the child reported ready, or the command started) once
// that moment is known.
type Recorder struct {
	interval time.Duration
	gpu      bool

	at       []time.Time
	rss      []uint64
	gpuProc  []*uint64 // nil where the sample failed or the figure is unknown
	gpuDev   []*uint64
	gpuUtil  []*float64
	counters [][]int64 // per row: the latest values streamed by the child
	countT   []float64 // per row: the child's timestamp of those values

	// PeakRSS is the highest RSS sampled.
	PeakRSS                 uint64
	peakGPUProc, peakGPUDev uint64
	gpuUtilSum              float64
	gpuSamples              int // samples NVML took
	gpuProcSamples          int // of them, with a per-process figure
}

// NewRecorder records samples taken every interval, GPU columns too when
// gpu is set.
func NewRecorder(interval time.Duration, gpu bool) *Recorder {
	return &Recorder{interval: interval, gpu: gpu}
}

// Add records one sample: the RSS, the GPUs' reading (nil where it
// failed) and the latest counters with their own timestamp.
func (r *Recorder) Add(at time.Time, rss uint64, g *GPUReading, counters []int64, countersT float64) {
	r.at = append(r.at, at)
	r.countT = append(r.countT, countersT)
	r.rss = append(r.rss, rss)
	r.PeakRSS = max(r.PeakRSS, rss)
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

// GPUPeaks returns the GPU figures of the repetition: each nil when no
// sample had it.
func (r *Recorder) GPUPeaks() (proc, dev *uint64, util *float64) {
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

// Series builds the columnar series with t0 as time zero. Counter columns
// hold, for each row, the latest values the child had streamed (0 before
// the first).
func (r *Recorder) Series(t0 time.Time, names []string) *results.Series {
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

// Rows are the counters' values of every sample, in order: the latest
// the measured process had streamed at that moment (nil before the first).
func (r *Recorder) Rows() [][]int64 { return r.counters }
