package shape

import "testing"

// TestPrecomputeFactorHalvesUntilHalfTheFreeMemory: the requested factor
// stays while the precomputed bases fit in half the free memory, and is
// halved, down to 1 (none), until they do.
func TestPrecomputeFactorHalvesUntilHalfTheFreeMemory(t *testing.T) {
	p := Params{Constraints: 1 << 20}
	perFactor := uint64(p.FullMSMPoints() * G1Bytes)
	for _, c := range []struct {
		requested int
		free      uint64
		want      int
	}{
		{8, 16 * perFactor, 8},
		{8, 16*perFactor - 2, 4}, // one byte short of 8 at half
		{8, 8 * perFactor, 4},
		{8, 2 * perFactor, 1},
		{8, 0, 1},
		{1, 1 << 62, 1},
		{0, 1 << 62, 1},
		{6, 6 * perFactor, 3},
	} {
		if got := PrecomputeFactor(p, c.requested, c.free); got != c.want {
			t.Errorf("PrecomputeFactor(requested %d, free %d × one factor's bytes) = %d, want %d", c.requested, c.free/perFactor, got, c.want)
		}
	}
	if got := p.PrecomputedBytes(1); got != 0 {
		t.Errorf("PrecomputedBytes(1) = %d, want 0 (nothing precomputed)", got)
	}
}
