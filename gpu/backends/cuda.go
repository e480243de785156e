//go:build cuda

package backends

import (
	"os"
	"strings"

	"github.com/provebench/provebench/gpu"
	"github.com/provebench/provebench/gpu/cuda"
)

// CUDABuilt tells whether this binary contains the CUDA backend.
const CUDABuilt = true

// openCUDA opens ICICLE on the first opts.Devices GPUs (all when 0).
// PROVEBENCH_ICICLE_DEVICE=CPU runs the same code path on ICICLE's CPU
// device, for hosts without a GPU (slow; for checking the build).
func openCUDA(opts Options) (gpu.Backend, error) {
	o := cuda.Options{Rand: opts.Rand}
	if t := os.Getenv("PROVEBENCH_ICICLE_DEVICE"); t != "" {
		o.DeviceType = strings.ToUpper(t)
	}
	for d := 0; d < opts.Devices; d++ {
		o.Devices = append(o.Devices, d)
	}
	return cuda.New(o)
}
