//go:build !cuda

package backends

import "github.com/provebench/provebench/gpu/prover"

// CUDABuilt tells whether this binary contains the CUDA backend.
const CUDABuilt = false

func openCUDA(Options) (prover.Backend, error) { return nil, ErrNoCUDA }
