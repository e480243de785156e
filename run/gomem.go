package run

import (
	"bytes"
	"runtime/metrics"
	"runtime/pprof"
	"time"

	"github.com/provebench/provebench/run/sample"
)

// Series names the child adds to account for its RSS beside the pipeline's
// dataset bytes: the Go runtime's own figures (runtime/metrics) and the
// proving key's resident bytes. RSS = key + datasets + Go runtime + the
// rest (C allocations, the binary, thread stacks outside Go).
const (
	// seriesGoHeapInUse is the heap's in-use spans (objects and the
	// fragmentation inside their spans): Go's HeapInuse.
	seriesGoHeapInUse = "go_heap_inuse_bytes"
	// seriesGoHeapReleased is heap memory returned to the kernel: mapped
	// but not resident.
	seriesGoHeapReleased = "go_heap_released_bytes"
	// seriesGoRuntime is everything the runtime has mapped and not
	// released (heap in use and free-but-kept, stacks, metadata): the Go
	// share of RSS, an upper bound since kept pages may not be touched.
	seriesGoRuntime = "go_runtime_bytes"
	// seriesGoGCCycles counts finished GC cycles (cumulative).
	seriesGoGCCycles = "go_gc_cycles"
	// seriesKeyResident is the proving key mapping's resident bytes
	// (/proc/self/smaps), sampled every keyInterval or less often; absent when the key
	// is not a file mapping (its points are then in the Go heap).
	seriesKeyResident = "key_resident_bytes"
)

// keyInterval is how often, at most, the key's residency is read from
// smaps, which walks the key's page tables (a cost that grows with what
// is touched): too costly for every tick. For a large key the
// reads are spaced further, to a hundred times their own cost, so that
// they take at most 1% of a core; between them the key follows the
// process's file-backed RSS (statm, a kernel counter), the key being the
// one large file the child reads.
const keyInterval = 100 * time.Millisecond

// goMemory reads the runtime's memory figures and the key's residency for
// the sampler goroutine, and keeps a heap profile at the peak when asked.
// It is owned by that one goroutine.
type goMemory struct {
	samples []metrics.Sample
	keyAddr uintptr   // 0: the key is not a file mapping
	keyRSS  int64     // the last smaps reading
	fileRSS int64     // the file-backed RSS at that reading
	nextKey time.Time // when to read smaps again

	// profile, when set, receives a heap profile each time the heap in
	// use passes its last profiled peak by a tenth: the one kept is taken
	// at (or within a tenth of) the repetition's peak.
	profile     bool
	profilePeak int64
	profileAt   float64
	heap        bytes.Buffer
}

func newGoMemory(keyAddr uintptr, profile bool) *goMemory {
	names := []string{
		"/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes",
		"/memory/classes/heap/released:bytes",
		"/memory/classes/total:bytes",
		"/gc/cycles/total:gc-cycles",
	}
	g := &goMemory{keyAddr: keyAddr, profile: profile}
	for _, n := range names {
		g.samples = append(g.samples, metrics.Sample{Name: n})
	}
	return g
}

// names are the series read adds to each sample, in order.
func (g *goMemory) names() []string {
	n := []string{seriesGoHeapInUse, seriesGoHeapReleased, seriesGoRuntime, seriesGoGCCycles}
	if g.keyAddr != 0 {
		n = append(n, seriesKeyResident)
	}
	return n
}

// read fills dst (one value per name) at time t (seconds since the
// pipeline's start).
func (g *goMemory) read(dst []int64, now time.Time, t float64) {
	metrics.Read(g.samples)
	u := func(i int) int64 {
		if g.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(g.samples[i].Value.Uint64())
	}
	inUse := u(0) + u(1)
	released := u(2)
	dst[0], dst[1], dst[2], dst[3] = inUse, released, u(3)-released, u(4)
	if g.keyAddr != 0 {
		dst[4] = g.keyResident(now)
	}
	if g.profile && inUse > g.profilePeak+g.profilePeak/10 {
		g.profilePeak, g.profileAt = inUse, t
		g.heap.Reset()
		_ = pprof.Lookup("heap").WriteTo(&g.heap, 0) // a failed profile leaves an empty one, reported as absent
	}
}

// keyResident is the key mapping's resident bytes: read from smaps when
// due, else the last reading moved by the file-backed RSS since.
func (g *goMemory) keyResident(now time.Time) int64 {
	file, ferr := sample.SharedRSS(0)
	if !now.Before(g.nextKey) {
		if v, err := sample.MappingRSS(0, g.keyAddr); err == nil && ferr == nil {
			g.keyRSS, g.fileRSS = int64(v), int64(file)
		}
		g.nextKey = now.Add(max(keyInterval, 100*time.Since(now)))
		return g.keyRSS
	}
	if ferr != nil {
		return g.keyRSS
	}
	return max(g.keyRSS+int64(file)-g.fileRSS, 0)
}
