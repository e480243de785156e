package main

import (
	"context"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// bench prints Go benchmark lines (benchfmt) on stdout, o.bench of each:
//
//	BenchmarkPeer/<prover>/2^k/single  one partition proved from a solved
//	    witness, the key resident: ms/partition is Prove's time after gnark's
//	    solver (the solve is gnark's synthesis: it computes a, b, c and the
//	    wires, as provebench's synthesis does before its prover starts)
//	BenchmarkPeer/<prover>/2^k/steady  partitions x proofs partitions back to
//	    back: ms/partition is the mean of the same, wall-ms/partition the span
//	    per partition with the witness and the solve (gnark's ICICLE prover
//	    holds the device through its solve, so nothing overlaps)
//
// Each line also carries the solve, the witness and gnark's own stage times
// (ms/op) where gnark logs them (ICICLE_STEP_PROFILE=1 for the MSMs and the
// NTT region on ICICLE).
func (r *runner) bench(ctx context.Context) error {
	if err := r.warmUp(ctx, max(1, r.o.warmups)); err != nil {
		return err
	}
	name := fmt.Sprintf("BenchmarkPeer/%s/2^%d", proverName, bits.TrailingZeros(uint(r.shape.n)))
	for i := range r.o.bench {
		if !r.o.benchKinds["single"] {
			break
		}
		p, err := r.provePartition(ctx, 0, i, false)
		if err != nil {
			return err
		}
		r.out.printf("%s", benchLine(name+"/single", 1, p.prove, 0, []*partition{p}))
	}
	per := r.o.partitions * r.o.proofs
	for range r.o.bench {
		if !r.o.benchKinds["steady"] {
			break
		}
		var ps []*partition
		start := time.Now()
		for i := range per {
			p, err := r.provePartition(ctx, i/r.o.partitions, i%r.o.partitions, false)
			if err != nil {
				return err
			}
			ps = append(ps, p)
		}
		wall := time.Since(start)
		var prove time.Duration
		for _, p := range ps {
			prove += p.prove
		}
		r.out.printf("%s", benchLine(name+"/steady", per, prove/time.Duration(per), wall/time.Duration(per), ps))
	}
	return nil
}

// benchLine is one benchmark result: n partitions, op the time per
// partition, wall (when not 0) the span per partition; the solve, witness
// and gnark stage times are means per partition.
func benchLine(name string, n int, op, wall time.Duration, ps []*partition) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d %d ns/op %.3f ms/partition", name, n, op.Nanoseconds(), msOf(op))
	if wall > 0 {
		fmt.Fprintf(&b, " %.3f wall-ms/partition", msOf(wall))
	}
	sums := map[string]time.Duration{}
	for _, p := range ps {
		sums["solve"] += p.solve
		sums["witness"] += p.witness
		for k, v := range p.stages {
			if k != "solve" && k != "prove" {
				sums[k] += v
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(&b, " %.3f %s-ms/op", msOf(sums[k])/float64(len(ps)), k)
	}
	return b.String()
}
