package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/pipeline/config"
)

// sim is the state of one simulated run; it mirrors the engine's stages
// (dispatcher, synthesis, channel, GPU workers, finalizers) as event
// handlers on one virtual clock.
type sim struct {
	o     Options
	w     config.Workload
	c     config.Config
	tr    *pipeline.Tracker
	core  *pipeline.Core
	rng   *rand.Rand
	now   time.Duration
	seq   int64
	queue events

	// dispatcher
	nextProof, nextPart int
	proofOpen           bool
	proofsInFlight      int
	since               time.Duration
	retryAt             time.Duration // pending retry event, 0 if none
	remaining           []int         // per proof: partitions not yet ended
	proofs              []pipeline.ProofTiming
	timings             []pipeline.PartitionTiming
	ended               int

	// synthesis under processor sharing
	synth     []*item
	lastShare time.Duration

	// channel and GPU workers
	chanFree int
	sendQ    []*item
	chanQ    []*item
	idle     []int // devices of idle workers
	devBusy  []bool
	devQ     [][]devJob
	// pinning: per device, when the stalls of partitions that started
	// synthesis while it was idle stop mattering (see stallDevices)
	pinning [][]time.Duration
	// SubmitQueue: per device, slots taken by partitions the device has
	// not begun, and the partitions waiting in Start for one
	submitted []int
	slotQ     [][]*item

	// pooledInUse is the part of Host.PooledBytes's pool that live
	// datasets hold.
	pooledInUse int64

	peakRSS  int64
	busy     time.Duration // device compute, all devices
	stalled  time.Duration // devices held up by PinStall
	timeline []Point
	oom      *OOM
	snap     pipeline.Snapshot
	iSynth   int
	iData    int
}

func newSim(o Options) *sim {
	w := o.Workload
	tr := pipeline.NewTracker()
	s := &sim{
		o:         o,
		w:         w,
		c:         o.Config,
		tr:        tr,
		core:      pipeline.NewCore(o.Config, tr, o.Stages.ABCBytes, o.Stages.WireBytes),
		rng:       rand.New(rand.NewPCG(w.Seed, 0x5eed)),
		remaining: make([]int, w.Proofs),
		timings:   make([]pipeline.PartitionTiming, w.Proofs*w.Partitions),
		chanFree:  o.Config.ChannelCapacity,
		devBusy:   make([]bool, o.Host.DeviceCount()),
		devQ:      make([][]devJob, o.Host.DeviceCount()),
		pinning:   make([][]time.Duration, o.Host.DeviceCount()),
		submitted: make([]int, o.Host.DeviceCount()),
		slotQ:     make([][]*item, o.Host.DeviceCount()),
	}
	for p := range s.remaining {
		s.remaining[p] = w.Partitions
	}
	for d := range o.Host.DeviceCount() {
		for range o.Config.GPUWorkers {
			s.idle = append(s.idle, d)
		}
	}
	names := tr.Names()
	s.iSynth = slices.Index(names, pipeline.CounterSynthesizing)
	s.iData = slices.Index(names, pipeline.CounterDatasetBytes)
	return s
}

func (s *sim) at(d time.Duration, kind jobKind, it *item) {
	s.seq++
	gen := 0
	if it != nil {
		gen = it.gen
	}
	heap.Push(&s.queue, &event{at: d, seq: s.seq, kind: kind, it: it, gen: gen})
}

// run plays events until the batch has ended or memory ran out. A batch
// still unfinished long after every partition could have run one after
// another (a configuration that can never admit the rest) is an error, not
// an endless loop of pacer ticks.
func (s *sim) run() error {
	if iv := s.core.TickInterval(); iv > 0 {
		s.at(iv, tick, nil)
	}
	s.pump()
	s.observe()
	total := s.w.Proofs * s.w.Partitions
	st := s.o.Stages
	serial := st.Synthesis + st.SynthesisSpread + st.Upload + st.GPUStart + st.Finalize
	deadline := 10*time.Duration(total)*serial + time.Hour
	for s.ended < total && s.oom == nil && s.queue.Len() > 0 {
		e := heap.Pop(&s.queue).(*event)
		s.now = e.at
		if s.now > deadline {
			return fmt.Errorf("no progress: %d of %d partitions ended after %v of virtual time", s.ended, total, s.now)
		}
		switch e.kind {
		case synthDone:
			if e.gen == e.it.gen {
				s.synthesized(e.it)
			}
		case uploadDone:
			s.uploaded(e.it)
		case streamCopyDone:
			s.deviceFree(e.it.dev)
			s.afterUpload(e.it)
		case startDone:
			s.startEnds(e.it)
		case nttDone:
			s.nttRan(e.it)
		case finalizeDone:
			s.finalized(e.it)
		case stallDone:
			s.deviceFree(e.it.dev)
		case tick:
			s.core.Tick(s.now)
			s.at(s.now+s.core.TickInterval(), tick, nil)
		case retry:
			s.retryAt = 0
		}
		s.pump()
		s.observe()
	}
	if s.ended < total && s.oom == nil {
		return fmt.Errorf("stalled: %d of %d partitions ended and nothing left to happen", s.ended, total)
	}
	return nil
}

// pump admits partitions in (proof, partition) order while the proof
// slots and the gates let it, as the engine's dispatcher does.
func (s *sim) pump() {
	for s.nextProof < s.w.Proofs {
		if !s.proofOpen {
			if s.proofsInFlight >= s.w.Concurrency {
				return
			}
			s.proofOpen = true
			s.proofsInFlight++
			s.core.ProofStarted()
			s.proofs = append(s.proofs, pipeline.ProofTiming{Proof: s.nextProof, Started: s.now})
			s.since = s.now
		}
		it := &item{proof: s.nextProof, part: s.nextPart, dev: -1}
		ok, r, _ := s.core.TryAdmit(s.now, &it.tk)
		if !ok {
			if r > 0 && (s.retryAt == 0 || r < s.retryAt) {
				s.retryAt = r
				s.at(r, retry, nil)
			}
			return
		}
		it.t = &s.timings[it.proof*s.w.Partitions+it.part]
		*it.t = pipeline.PartitionTiming{Proof: it.proof, Partition: it.part, Device: -1,
			Admitted: s.now, AdmissionWait: s.now - s.since}
		s.since = s.now
		s.startSynthesis(it)
		if s.nextPart++; s.nextPart == s.w.Partitions {
			s.nextPart, s.proofOpen = 0, false
			s.nextProof++
		}
	}
}

// synthesisTime draws one partition's synthesis time alone on the cores.
func (s *sim) synthesisTime() time.Duration {
	st := s.o.Stages
	if st.SynthesisSpread == 0 {
		return st.Synthesis
	}
	u := 2*s.rng.Float64() - 1
	return st.Synthesis + time.Duration(u*float64(st.SynthesisSpread))
}

// share is the speed of each synthesizing partition: the cores shared
// among them.
func (s *sim) share() float64 {
	busy := 0
	if s.o.Host.SharesWithProver() {
		for _, b := range s.devBusy {
			if b {
				busy++
			}
		}
	}
	return s.o.Host.SynthesisSpeedBusy(len(s.synth), busy)
}

// setBusy marks a serial device working or idle; on a host prover the
// synthesizing partitions' share of the cores changes with it.
func (s *sim) setBusy(dev int, busy bool) {
	if !s.o.Host.SharesWithProver() || s.devBusy[dev] == busy {
		s.devBusy[dev] = busy
		return
	}
	s.reshare()
	s.devBusy[dev] = busy
	s.reschedule()
}

// reshare charges the work done since the last change of the synthesizing
// set, before it changes.
func (s *sim) reshare() {
	if dt := s.now - s.lastShare; dt > 0 {
		f := s.share()
		for _, it := range s.synth {
			it.work -= time.Duration(float64(dt) * f)
		}
	}
	s.lastShare = s.now
}

// reschedule sets every synthesizing partition's end at the new share.
func (s *sim) reschedule() {
	f := s.share()
	for _, it := range s.synth {
		it.gen++
		s.at(s.now+time.Duration(float64(max(it.work, 0))/f), synthDone, it)
	}
}

func (s *sim) startSynthesis(it *item) {
	s.core.SynthesisStarted(&it.tk)
	// The dataset is allocated as synthesis starts: in the pool while it
	// has room.
	if pool := s.o.Host.PooledBytes; pool > 0 {
		it.pooled = min(s.o.Stages.ABCBytes+s.o.Stages.WireBytes, max(pool-s.pooledInUse, 0))
		s.pooledInUse += it.pooled
	}
	s.stallDevices()
	s.reshare()
	it.work = s.synthesisTime()
	if s.o.synthesisOf != nil {
		it.work = s.o.synthesisOf(it.proof, it.part)
	}
	s.synth = append(s.synth, it)
	if !s.o.Host.Shares() {
		s.at(s.now+it.work, synthDone, it) // nothing to share: no rescheduling
		return
	}
	s.reschedule()
}

func (s *sim) synthesized(it *item) {
	s.reshare()
	s.synth = slices.DeleteFunc(s.synth, func(x *item) bool { return x == it })
	if s.o.Host.Shares() {
		s.reschedule()
	}
	it.synthEnd = s.now
	it.t.Synthesis = s.now - it.t.Admitted
	it.abc, it.wires = s.o.Stages.ABCBytes, s.o.Stages.WireBytes
	s.core.Synthesized(s.now, &it.tk, it.abc, it.wires)
	if s.o.admitFirst {
		s.pump()
	}
	s.core.WaitingSend(&it.tk)
	if s.chanFree > 0 && len(s.sendQ) == 0 {
		s.send(it)
	} else {
		s.sendQ = append(s.sendQ, it)
	}
	if s.o.admitFirst {
		s.pump() // hold's permit came back at Sent, before the take
	}
	s.serve()
}

func (s *sim) send(it *item) {
	s.chanFree--
	s.core.Sent(s.now, &it.tk)
	s.chanQ = append(s.chanQ, it)
}

// serve hands channel items to idle GPU workers; each take frees a slot
// for the first waiting sender.
func (s *sim) serve() {
	for len(s.idle) > 0 && len(s.chanQ) > 0 {
		dev := s.idle[0]
		s.idle = s.idle[1:]
		it := s.chanQ[0]
		s.chanQ = s.chanQ[1:]
		s.core.Taken(s.now, &it.tk)
		s.chanFree++
		if len(s.sendQ) > 0 {
			next := s.sendQ[0]
			s.sendQ = s.sendQ[1:]
			s.send(next)
		}
		it.t.QueueWait = s.now - it.synthEnd
		it.t.Device, it.dev = dev, dev
		s.core.StartBegan(&it.tk)
		if s.o.Stages.SubmitQueue > 0 {
			s.slotQ[dev] = append(s.slotQ[dev], it)
			s.grantSlots(dev)
			continue
		}
		s.upload(it)
	}
}

// uploadTimes splits a partition's upload: the part of its dataset in the
// pool at Upload's pace, which overlaps the device's compute, and the
// part beyond it (all of it without a pool) at PageableUpload's, which
// runs in the device's stream.
func (s *sim) uploadTimes(it *item) (pinned, onStream time.Duration) {
	st := s.o.Stages
	one := st.ABCBytes + st.WireBytes
	if st.PageableUpload == 0 || one == 0 || it.pooled >= one {
		return st.Upload, 0
	}
	inPool := float64(it.pooled) / float64(one)
	return time.Duration(inPool * float64(st.Upload)), time.Duration((1 - inPool) * float64(st.PageableUpload))
}

// releaseABC gives the pool back its share of a partition's a/b/c, freed
// early (the pool holds a dataset's buffers in proportion).
func (s *sim) releaseABC(it *item) {
	if it.pooled == 0 || it.abc+it.wires == 0 {
		return
	}
	n := it.pooled * it.abc / (it.abc + it.wires)
	it.pooled -= n
	s.pooledInUse -= n
}

// releaseAll gives the pool back what a freed dataset held of it.
func (s *sim) releaseAll(it *item) {
	s.pooledInUse -= it.pooled
	it.pooled = 0
}

// uploaded goes on from the pooled part of an upload: to the part beyond
// the pool, in the device's stream (a phase of the serial device, after
// the work queued before it), or to the rest of Start.
func (s *sim) uploaded(it *item) {
	if d := it.onStream; d > 0 {
		it.onStream = 0
		if !s.o.Stages.DeviceSerial {
			s.at(s.now+d, streamCopyDone, it)
			return
		}
		s.devQ[it.dev] = append(s.devQ[it.dev], devJob{it: it, kind: streamCopyDone, d: d})
		s.nextOnDevice(it.dev)
		return
	}
	s.afterUpload(it)
}

// afterUpload is the rest of Start once the dataset is on the device: with
// a submit queue Start returns, else the device runs the NTT region.
func (s *sim) afterUpload(it *item) {
	if s.o.Stages.SubmitQueue > 0 {
		s.startEnds(it)
		return
	}
	s.onDevice(it, startDone, s.o.Stages.GPUStart)
}

// upload starts a taken partition's upload; Start goes on when it ends.
func (s *sim) upload(it *item) {
	up, onStream := s.uploadTimes(it)
	it.onStream = onStream
	if onStream > 0 && up == 0 {
		s.uploaded(it)
		return
	}
	if up > 0 {
		s.at(s.now+time.Duration(float64(up)/s.o.Host.Speed()), uploadDone, it)
	} else if s.o.Stages.SubmitQueue > 0 {
		s.at(s.now, startDone, it)
	} else {
		s.onDevice(it, startDone, s.o.Stages.GPUStart)
	}
}

// grantSlots lets partitions waiting in Start for a submit slot go on to
// their upload while the device has slots free.
func (s *sim) grantSlots(dev int) {
	for len(s.slotQ[dev]) > 0 && s.submitted[dev] < s.o.Stages.SubmitQueue {
		it := s.slotQ[dev][0]
		s.slotQ[dev] = s.slotQ[dev][1:]
		s.submitted[dev]++
		s.upload(it)
	}
}

// submittedStart ends a SubmitQueue Start: the partition is handed to its
// device, which runs its NTT region and MSMs when its turn comes, and the
// GPU worker is free.
func (s *sim) submittedStart(it *item) {
	it.t.GPUStart = s.now - it.t.Admitted - it.t.Synthesis - it.t.QueueWait
	s.core.Started(s.now, &it.tk)
	s.core.Finalizing(&it.tk)
	s.onDevice(it, nttDone, s.o.Stages.GPUStart)
	s.idle = append(s.idle, it.dev)
	s.serve()
}

// nttRan frees a/b/c after the NTT region where early free is on and
// runs the partition's MSMs at once on the same device.
func (s *sim) nttRan(it *item) {
	if s.c.EarlyFree {
		s.core.ABCFreed(s.now, &it.tk, it.abc)
		s.releaseABC(it)
		it.abc = 0
	}
	d := time.Duration(float64(s.o.Stages.Finalize) / s.o.Host.Speed())
	s.busy += d
	s.at(s.now+d, finalizeDone, it)
}

// startEnds ends a partition's Start, the backend's way, unless the
// device's first-use costs hold it (and, being serial, the device) until
// DeviceReady.
func (s *sim) startEnds(it *item) {
	if ready := s.o.Stages.DeviceReady; s.now < ready {
		s.at(ready, startDone, it)
		return
	}
	if s.o.Stages.SubmitQueue > 0 {
		s.submittedStart(it)
		return
	}
	s.started(it)
}

// onDevice runs a GPU phase of d (at the host's GPU speed): at once, or,
// on a serial device, after the device's earlier phases.
func (s *sim) onDevice(it *item, kind jobKind, d time.Duration) {
	d = time.Duration(float64(d) / s.o.Host.Speed())
	s.busy += d
	if !s.o.Stages.DeviceSerial {
		s.at(s.now+d, kind, it)
		return
	}
	s.devQ[it.dev] = append(s.devQ[it.dev], devJob{it: it, kind: kind, d: d})
	s.nextOnDevice(it.dev)
}

func (s *sim) nextOnDevice(dev int) {
	if s.devBusy[dev] || len(s.devQ[dev]) == 0 {
		return
	}
	s.pinStalls(dev)
	j := s.devQ[dev][0]
	s.devQ[dev] = s.devQ[dev][1:]
	s.setBusy(dev, true)
	if j.kind == nttDone {
		// The device takes the partition: its submit slot frees.
		s.submitted[dev]--
		defer s.grantSlots(dev)
	}
	s.at(s.now+j.d, j.kind, j.it)
}

// stallDevices holds up every serial device by Stages.PinStall that works
// while the partition starting synthesis page-locks its dataset: a busy
// one after its current phase; an idle one if it starts a phase before
// the locking is over, which takes about as long as the stall.
func (s *sim) stallDevices() {
	st := s.o.Stages
	if st.PinStall == 0 || !st.DeviceSerial {
		return
	}
	for dev, busy := range s.devBusy {
		// Before DeviceReady a busy device waits, it does not work.
		if busy && s.now >= st.DeviceReady {
			s.stallNext(dev, st.PinStall)
		} else {
			s.pinning[dev] = append(s.pinning[dev], s.now+st.PinStall)
		}
	}
}

// pinStalls puts before the phase an idle device is about to start the
// stalls of the page-locking still under way.
func (s *sim) pinStalls(dev int) {
	var n int
	works := max(s.now, s.o.Stages.DeviceReady) // when the phase can start working
	for _, until := range s.pinning[dev] {
		if until > works {
			n++
		}
	}
	s.pinning[dev] = s.pinning[dev][:0]
	if n > 0 {
		s.stallNext(dev, time.Duration(n)*s.o.Stages.PinStall)
	}
}

func (s *sim) stallNext(dev int, d time.Duration) {
	stall := devJob{it: &item{dev: dev}, kind: stallDone, d: d}
	s.devQ[dev] = append([]devJob{stall}, s.devQ[dev]...)
	s.stalled += d
}

func (s *sim) deviceFree(dev int) {
	if s.o.Stages.DeviceSerial {
		s.setBusy(dev, false)
		s.nextOnDevice(dev)
	}
}

func (s *sim) started(it *item) {
	it.t.GPUStart = s.now - it.t.Admitted - it.t.Synthesis - it.t.QueueWait
	s.core.Started(s.now, &it.tk)
	s.deviceFree(it.dev)
	if s.c.EarlyFree {
		s.core.ABCFreed(s.now, &it.tk, it.abc)
		s.releaseABC(it)
		it.abc = 0
	}
	s.core.Finalizing(&it.tk)
	s.onDevice(it, finalizeDone, s.o.Stages.Finalize)
	s.idle = append(s.idle, it.dev)
	s.serve()
}

func (s *sim) finalized(it *item) {
	t := it.t
	t.Finalize = s.now - t.Admitted - t.Synthesis - t.QueueWait - t.GPUStart
	s.core.Finalized(&it.tk)
	s.deviceFree(it.dev)
	s.core.Deallocated(s.now, &it.tk, it.abc, it.wires)
	s.releaseAll(it)
	s.core.Ended(s.now, &it.tk, pipeline.Done)
	t.Outcome = pipeline.Done
	s.ended++
	if s.remaining[it.proof]--; s.remaining[it.proof] == 0 {
		s.core.ProofEnded(pipeline.Done)
		s.proofsInFlight--
		s.proofs[it.proof].Ended = s.now
		s.proofs[it.proof].Outcome = pipeline.Done
	}
}

// observe records the predicted RSS after an event and stops the run when
// it passes the host's memory.
func (s *sim) observe() {
	s.tr.Snapshot(&s.snap)
	held := s.o.Stages.SynthesisBytes
	if held == 0 {
		held = s.o.Stages.ABCBytes + s.o.Stages.WireBytes
	}
	f := s.o.Stages.RSSFactor
	if f == 0 {
		f = 1
	}
	live := int64(f * float64(s.snap.Values[s.iData]+s.snap.Values[s.iSynth]*held))
	rss := s.o.Host.Baseline + max(s.o.Host.PooledBytes, live)
	s.peakRSS = max(s.peakRSS, rss)
	if s.o.Timeline {
		s.timeline = append(s.timeline, Point{T: s.now, RSS: rss, Counters: slices.Clone(s.snap.Values)})
	}
	if m := s.o.Host.Memory; m > 0 && rss > m && s.oom == nil {
		s.oom = &OOM{At: s.now, RSS: rss, Counters: map[string]int64{}}
		for i, name := range s.tr.Names() {
			s.oom.Counters[name] = s.snap.Values[i]
		}
	}
}

// result assembles the report as the engine's would read.
func (s *sim) result() *Result {
	rep := &pipeline.Report{
		Backend:  "simulated",
		Devices:  s.o.Host.DeviceCount(),
		Workload: s.w,
		Config:   s.c,
		Elapsed:  s.now,
		Pacer:    s.core.PacerSamples(),
	}
	first, last := time.Duration(-1), time.Duration(0)
	for i := range s.timings {
		t := s.timings[i]
		if t.Outcome == "" {
			continue
		}
		rep.Partitions = append(rep.Partitions, t)
		rep.PartitionsDone++
		if first < 0 || t.Admitted < first {
			first = t.Admitted
		}
		last = max(last, t.End())
	}
	for _, pt := range s.proofs {
		if pt.Outcome == pipeline.Done {
			rep.ProofsDone++
		} else {
			rep.ProofsCancelled++ // cut short by the OOM
		}
		rep.Proofs = append(rep.Proofs, pt)
	}
	rep.ProofsNotStarted = s.w.Proofs - len(s.proofs)
	rep.PartitionsNotStarted = s.w.Proofs*s.w.Partitions - rep.PartitionsDone
	if first >= 0 {
		rep.Wall = last - first
	}
	res := &Result{Report: rep, Tracker: s.tr, PeakRSS: s.peakRSS, Timeline: s.timeline, OOM: s.oom, DeviceStalled: s.stalled}
	if rep.Wall > 0 {
		res.DeviceBusy = min(float64(s.busy)/float64(rep.Wall)/float64(s.o.Host.DeviceCount()), 1)
	}
	return res
}
