package shape

// DefaultPrecomputeFactor is the precompute factor the CUDA backend loads
// the full MSMs' bases with unless a run asks for another
// ($PROVEBENCH_MSM_PRECOMPUTE), lowered at load where the device lacks
// the memory (PrecomputeFactor). It trades device memory for MSM time
// (docs/gpu.md has the measurements behind it). It is here, not in
// gpu/cuda, so that the simulator, which links no backend, prices the
// choice the backend makes.
const DefaultPrecomputeFactor = 8

// FullMSMPoints is the number of bases of the full-width MSMs, the ones
// a device precomputes: A over the full-width wires, L over the private
// full-width wires, and H.
func (p Params) FullMSMPoints() int64 {
	full := int64(p.BitWires())
	return full + (full - (1 + NumPublic)) + int64(p.Constraints-1)
}

// PrecomputedBytes is what the precomputed bases of the full MSMs take on
// a device at that factor: factor points per base (none at 1).
func (p Params) PrecomputedBytes(factor int) int64 {
	if factor <= 1 {
		return 0
	}
	return p.FullMSMPoints() * G1Bytes * int64(factor)
}

// PrecomputeFactor is the factor a device loads the bases of p with when
// requested is asked for and free bytes of its memory are free once the
// key is on it: requested, halved until the precomputed bases take at most
// half of free, so that partitions keep room to run. 1 means none.
func PrecomputeFactor(p Params, requested int, free uint64) int {
	f := requested
	for f > 1 && uint64(p.PrecomputedBytes(f)) > free/2 {
		f /= 2
	}
	return max(f, 1)
}
