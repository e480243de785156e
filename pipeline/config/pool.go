package config

// WarmPoolDatasets is how many datasets a warm start reserves page-locked
// memory for, on a backend that locks dataset memory: those the strategy
// lets live at once (its gates' tightest bound, never more than the
// partitions of the proofs in flight), but no more than the pipeline's
// working set when nothing piles up (the partitions synthesizing, the
// channel, and two per GPU worker and device: one running, one
// uploading). A partition beyond it, in a pile-up, is synthesized into
// ordinary memory and uploaded through the driver's staging buffer,
// rather than lock pages beside a working device. c must be resolved
// (Config.Resolved); the runner and the simulator size the pool alike
// with it.
func WarmPoolDatasets(w Workload, c Config, devices int) int64 {
	abc, wires := DatasetBytes(w)
	gpuSide := 2 * int64(c.GPUWorkers) * int64(max(devices, 1))
	live := int64(w.Concurrency) * int64(w.Partitions)
	if n, _, ok := Registered().Bound(c, abc+wires, gpuSide); ok && n < live {
		live = n
	}
	working := int64(c.SynthesisWorkers+c.ChannelCapacity) + gpuSide
	return max(1, min(live, working))
}
