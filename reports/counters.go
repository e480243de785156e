package reports

import (
	"hash/fnv"
	"image/color"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// panelKind is where a timeline draws a series.
type panelKind int

const (
	panelMemory panelKind = iota // the RSS account (stacked)
	panelBytes                   // live byte counters
	panelStages                  // partitions by pipeline stage (stacked)
	panelCounts                  // other live counts
	panelEvents                  // cumulative counts
	panelGC                      // the Go runtime's GC cycles (cumulative, another scale)
	panelNone                    // recorded, not drawn (cumulative times)
)

// counterDoc describes one series a repetition records: the report's
// glossary, the timeline panel it belongs to and its colour there. The
// names are the results document's; reports reads results only, so they
// are written out here rather than imported from the pipeline.
type counterDoc struct {
	name    string
	panel   panelKind
	meaning string
}

// glossary lists every series the built-in driver records, panel by panel
// and in pipeline order within a panel; the position within its panel
// gives a series its colour, so that a counter has one colour in every
// timeline and no two of one panel share one.
var glossary = []counterDoc{
	{"key_resident_bytes", panelMemory, "Resident bytes of the proving key's file mapping: the child's own page tables (/proc/self/smaps) read at most every 100 ms and, for a large key, no more than 1% of a core; between readings it follows the child's file-backed RSS (statm)."},
	{"dataset_bytes", panelMemory, "Live bytes of partition datasets the pipeline holds: abc_bytes + wire_bytes, one counter so its peak is exact."},
	{"go_runtime_bytes", panelMemory, "Memory the Go runtime has mapped and not returned to the kernel (heap in use and kept free, stacks, metadata; runtime/metrics). An upper bound of Go's share of RSS."},

	{"abc_bytes", panelBytes, "Live bytes of a/b/c evaluation vectors, from when synthesis hands a dataset over until they are freed (early free or dealloc)."},
	{"wire_bytes", panelBytes, "Live bytes of wire assignments held by the pipeline, counted likewise."},
	{"budget_reserved_bytes", panelBytes, "Bytes reserved from the byte budget (budget strategy) and not yet returned."},
	{"device_memory_bytes", panelBytes, "Memory the backend holds for its work beyond the datasets: device memory on the CUDA backend; on the CPU backend its host working buffers (the H polynomial), part of RSS and drawn in the RSS account."},
	{"go_heap_inuse_bytes", panelBytes, "Go heap in use: spans holding objects, their fragmentation included (runtime/metrics; Go's HeapInuse)."},
	{"go_heap_released_bytes", panelBytes, "Go heap returned to the kernel: mapped, not resident."},

	{"synthesizing", panelStages, "Partitions inside synthesis."},
	{"waiting_send", panelStages, "Synthesized partitions blocked before the channel, each holding its whole dataset: the seed's pile-up."},
	{"in_channel", panelStages, "Partitions the channel has accepted and no GPU worker has taken yet."},
	{"on_gpu", panelStages, "Partitions inside the backend's Start: the NTT region (a/b/c needed)."},
	{"finalizing", panelStages, "Partitions whose Start returned and whose MSMs and assembly are pending."},

	{"proofs_in_flight", panelCounts, "Proofs admitted (holding one of the workload's concurrency slots) and not yet finished."},
	{"permits_held", panelCounts, "Partition permits (release and hold strategies) taken and not yet returned."},
	{"pre_gpu", panelCounts, "Partitions admitted and not yet taken by a GPU worker (synthesizing, waiting to send or in the channel); the pacer's max_in_flight caps it."},
	{"queue_depth", panelCounts, "The GPU queue: waiting_send + in_channel, partitions synthesized and not yet taken by a GPU worker. The pacer holds it at its target."},
	{"device_queued", panelCounts, "Jobs the backend has accepted and not finished, over all devices (its own queue, after the pipeline's)."},

	{"partitions_done", panelEvents, "Partitions proved so far."},
	{"gpu_starts", panelEvents, "Backend Start calls returned so far."},
	{"proofs_done", panelEvents, "Proofs whose every partition was proved."},
	{"partitions_failed", panelEvents, "Partitions whose synthesis or proving failed."},
	{"partitions_cancelled", panelEvents, "Partitions admitted and then abandoned because their proof failed or the run was cancelled."},
	{"proofs_failed", panelEvents, "Proofs with a failed partition."},
	{"proofs_cancelled", panelEvents, "Proofs in flight when the run was cancelled."},
	{"go_gc_cycles", panelGC, "Go garbage collection cycles finished since the child started (runtime/metrics)."},

	{"device_busy_us", panelNone, "The backend's busy time so far, in microseconds (device busy is its growth over the pipeline's wall time)."},
	{"device_span_us", panelNone, "The device time the busy figure covers so far, in microseconds (steady busy is busy's growth over it)."},
	{"device_busy_ms", panelNone, "The backend's busy time so far, in milliseconds (documents written before device_busy_us)."},
}

// counterColors is a ten-colour qualitative palette (Tableau 10): enough
// for the largest panel, distinct in print and for common colour
// blindness.
var counterColors = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},
}

// lookupCounter finds a series in the glossary and its position within
// its panel.
func lookupCounter(name string) (counterDoc, int, bool) {
	pos := map[panelKind]int{}
	for _, c := range glossary {
		if c.name == name {
			return c, pos[c.panel], true
		}
		pos[c.panel]++
	}
	return counterDoc{}, 0, false
}

// counterStyle is a series' line style, the same in every timeline: known
// series by their place in the glossary, others by a hash of their name
// (after the known ones' colours, dashed, to tell them apart).
func counterStyle(name string) draw.LineStyle {
	if _, i, ok := lookupCounter(name); ok {
		return draw.LineStyle{Color: counterColors[i%len(counterColors)], Width: vg.Points(1.5)}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return draw.LineStyle{Color: counterColors[h.Sum32()%uint32(len(counterColors))], Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(5), vg.Points(2)}}
}

// panelOf places a series: the glossary's panel for a known one; for
// another (an exec driver's own counters), bytes by their suffix, a column
// that never falls and has no final value as events, the rest as counts.
func panelOf(name string, col []int64, live map[string]bool) panelKind {
	if c, _, ok := lookupCounter(name); ok {
		return c.panel
	}
	switch {
	case strings.HasSuffix(name, "_bytes"):
		return panelBytes
	case strings.HasSuffix(name, "_ms"), strings.HasSuffix(name, "_us"):
		return panelNone
	case !live[name] && nonDecreasing(col):
		return panelEvents
	}
	return panelCounts
}
