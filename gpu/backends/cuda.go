//go:build cuda

package backends

import (
	"os"
	"strings"

	"github.com/provebench/provebench/gpu/cuda"
	"github.com/provebench/provebench/gpu/prover"
)

// CUDABuilt tells whether this binary contains the CUDA backend.
const CUDABuilt = true

// openCUDA opens ICICLE on the first opts.Devices GPUs (all when 0), with
// datasets synthesized into page-locked memory and the precompute factor
// docs/gpu.md gives the measurements for. The environment can change three
// things (four): PROVEBENCH_ICICLE_DEVICE=CPU runs the same code path on ICICLE's
// CPU device, for hosts without a GPU (slow; for checking the build);
// PROVEBENCH_PIN_DATASETS=0 synthesizes into pageable memory;
// PROVEBENCH_MSM_PRECOMPUTE=N sets the precompute factor;
// PROVEBENCH_CUDA_SYNC=block|spin|yield|default how host threads wait for
// the device (block by default: no core spent spinning).
func openCUDA(opts Options) (prover.Backend, error) {
	precompute, err := cuda.PrecomputeFactorFromEnv()
	if err != nil {
		return nil, err
	}
	sync, err := cuda.SyncFromEnv()
	if err != nil {
		return nil, err
	}
	o := cuda.Options{Rand: opts.Rand, PinDatasets: true, PrecomputeFactor: precompute, Sync: sync}
	if t := os.Getenv("PROVEBENCH_ICICLE_DEVICE"); t != "" {
		o.DeviceType = strings.ToUpper(t)
	}
	if o.DeviceType == cuda.DeviceCPU || os.Getenv("PROVEBENCH_PIN_DATASETS") == "0" {
		o.PinDatasets = false
	}
	for d := 0; d < opts.Devices; d++ {
		o.Devices = append(o.Devices, d)
	}
	return cuda.New(o)
}
