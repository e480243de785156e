package events

import (
	"strconv"
	"strings"
	"time"
)

// The events of cuzk's TIMELINE lines, printed on stderr as
// TIMELINE,<offset_ms>,<event>,<job_id>,<detail>.
const (
	SynthStart = "SYNTH_START" // a partition's synthesis begins
	SynthEnd   = "SYNTH_END"   // it ends: the partition holds its dataset
	GPUQueue   = "GPU_QUEUE"   // it is sent into the GPU queue (channel)
	GPUPickup  = "GPU_PICKUP"  // a GPU worker takes it
	GPUStart   = "GPU_START"   // GPU work begins
	GPUEnd     = "GPU_END"     // GPU work ends
)

// TimelinePrefix starts every TIMELINE line.
const TimelinePrefix = "TIMELINE,"

// Counters the timeline keeps, named as provebench's own engine names the
// same quantities, so that reports and compare line them up.
const (
	CounterSynthesizing   = "synthesizing"    // between SYNTH_START and SYNTH_END
	CounterQueueDepth     = "queue_depth"     // synthesized, not yet taken by a GPU worker
	CounterInChannel      = "in_channel"      // between GPU_QUEUE and GPU_PICKUP
	CounterOnGPU          = "on_gpu"          // between GPU_START and GPU_END
	CounterPartitionsDone = "partitions_done" // GPU_END events
)

// Stages the timeline times per partition.
const (
	StageSynthesis = "synthesis"  // SYNTH_START -> SYNTH_END
	StageQueueWait = "queue_wait" // SYNTH_END -> GPU_PICKUP (or GPU_START)
	StageGPU       = "gpu"        // GPU_START -> GPU_END
)

// Timeline reads cuzk's TIMELINE lines into a sink. A partition is named by
// the job id and the first token of the detail (up to a space, ';' or
// ','), so detail may carry more after the partition. Times are the
// program's own offsets, so stage durations carry no pipe or polling delay.
// Events that arrive out of order for a partition (a GPU_START with no
// GPU_PICKUP before it) are read as if the missing one had come.
type Timeline struct {
	sink        *Sink
	state       map[string]jobState
	first, last time.Time
	seen        bool
	rejected    Rejections
}

// MaxOffset is the largest TIMELINE offset read: a month of a program's
// run. A line beyond it (or with a negative, NaN or infinite offset) is
// rejected: taken as it came, it would make the run's wall time absurd.
const MaxOffset = 30 * 24 * time.Hour

type jobState uint8

const (
	jobNone jobState = iota
	jobSynthesizing
	jobSynthesized
	jobQueued
	jobPicked
	jobOnGPU
)

// NewTimeline returns a TIMELINE reader writing into sink.
func NewTimeline(sink *Sink) *Timeline {
	sink.Declare(CounterSynthesizing, CounterQueueDepth, CounterInChannel, CounterOnGPU, CounterPartitionsDone)
	return &Timeline{sink: sink, state: make(map[string]jobState)}
}

// Line reads one line; lines that are not TIMELINE lines are ignored. It
// reports whether the line was one.
func (t *Timeline) Line(line string) bool {
	i := strings.Index(line, TimelinePrefix)
	if i < 0 {
		return false
	}
	f := strings.SplitN(line[i+len(TimelinePrefix):], ",", 4)
	if len(f) < 3 {
		return false
	}
	ms, err := strconv.ParseFloat(strings.TrimSpace(f[0]), 64)
	if err != nil {
		return false
	}
	if !(ms >= 0 && ms <= float64(MaxOffset/time.Millisecond)) { // NaN fails both
		t.rejected.add("TIMELINE offset %q ms: not between 0 and %s", strings.TrimSpace(f[0]), MaxOffset)
		return true
	}
	at := time.Unix(0, 0).Add(time.Duration(ms * float64(time.Millisecond)))
	job := strings.TrimSpace(f[2])
	if len(f) == 4 {
		if d := strings.TrimSpace(f[3]); d != "" {
			if k := strings.IndexAny(d, " ;,"); k >= 0 {
				d = d[:k]
			}
			job += "/" + d
		}
	}
	if !t.seen || at.Before(t.first) {
		t.first = at
	}
	if !t.seen || at.After(t.last) {
		t.last = at
	}
	t.seen = true
	t.event(strings.TrimSpace(f[1]), job, at)
	return true
}

// Rejected counts the TIMELINE lines refused.
func (t *Timeline) Rejected() Rejections { return t.rejected }

// Span is the time from the first event to the last, by the program's own
// offsets: the run's wall time as its events tell it. False before any.
func (t *Timeline) Span() (time.Duration, bool) {
	return t.last.Sub(t.first), t.seen
}

func (t *Timeline) event(ev, job string, at time.Time) {
	s, st := t.sink, t.state[job]
	switch ev {
	case SynthStart:
		s.Add(CounterSynthesizing, 1)
		s.StageStart(StageSynthesis, job, at)
		t.state[job] = jobSynthesizing
	case SynthEnd:
		if st == jobSynthesizing {
			s.Add(CounterSynthesizing, -1)
		}
		s.StageEnd(StageSynthesis, job, at)
		s.Add(CounterQueueDepth, 1)
		s.StageStart(StageQueueWait, job, at)
		t.state[job] = jobSynthesized
	case GPUQueue:
		if st == jobSynthesized {
			s.Add(CounterInChannel, 1)
			t.state[job] = jobQueued
		}
	case GPUPickup:
		t.pickup(job, st, at)
	case GPUStart:
		if st == jobSynthesized || st == jobQueued {
			t.pickup(job, st, at)
		}
		s.Add(CounterOnGPU, 1)
		s.StageStart(StageGPU, job, at)
		t.state[job] = jobOnGPU
	case GPUEnd:
		if st == jobOnGPU {
			s.Add(CounterOnGPU, -1)
		}
		s.StageEnd(StageGPU, job, at)
		s.Add(CounterPartitionsDone, 1)
		delete(t.state, job)
	}
}

func (t *Timeline) pickup(job string, st jobState, at time.Time) {
	if st == jobQueued {
		t.sink.Add(CounterInChannel, -1)
	}
	if st == jobSynthesized || st == jobQueued {
		t.sink.Add(CounterQueueDepth, -1)
		t.sink.StageEnd(StageQueueWait, job, at)
	}
	t.state[job] = jobPicked
}

// FormatTimeline writes one TIMELINE line (without the newline) in cuzk's
// format, for a prover that reports itself the same way.
func FormatTimeline(offset time.Duration, event, job, detail string) string {
	return TimelinePrefix + strconv.FormatFloat(float64(offset)/float64(time.Millisecond), 'f', 3, 64) +
		"," + event + "," + job + "," + detail
}
