//go:build !cuda

package backends

import "github.com/provebench/provebench/gpu"

// CUDABuilt tells whether this binary contains the CUDA backend.
const CUDABuilt = false

func openCUDA(Options) (gpu.Backend, error) { return nil, ErrNoCUDA }
