package pipeline

// TimelineEvent is a step of one partition through the pipeline, as an observer
// (Options.Observe) sees it. The events are cuzk's TIMELINE events, and
// each is reported where it keeps an event-derived count within the
// engine's own counter: an event that enters a state is reported after the
// counter's increment, one that leaves it before the decrement, so a count
// rebuilt from the events never exceeds the counter, and reaches its peak
// whenever the pipeline stays there for longer than a report takes.
type TimelineEvent string

// The events, in a partition's order.
const (
	EventSynthStart TimelineEvent = "SYNTH_START" // synthesis begins (synthesizing +1 before it)
	EventSynthEnd   TimelineEvent = "SYNTH_END"   // the dataset waits to send (queue_depth +1 before it)
	EventGPUQueue   TimelineEvent = "GPU_QUEUE"   // the channel accepted it (in_channel +1 before it)
	EventGPUPickup  TimelineEvent = "GPU_PICKUP"  // a GPU worker took it (in_channel, queue_depth -1 after it)
	EventGPUStart   TimelineEvent = "GPU_START"   // the backend's Start begins (on_gpu +1 before it)
	EventGPUEnd     TimelineEvent = "GPU_END"     // Start returned (on_gpu -1 after it)
)

// Observer is told of every partition's events as they happen. It is called
// from the pipeline's goroutines, concurrently, and must be quick.
type Observer func(ev TimelineEvent, proof, partition int)

func (r *run) observe(ev TimelineEvent, it *item) {
	if r.opts.Observe != nil {
		r.opts.Observe(ev, it.proof.id, it.part)
	}
}
