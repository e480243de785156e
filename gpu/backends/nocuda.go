//go:build !cuda

package backends

import (
	"errors"

	"github.com/provebench/provebench/gpu"
)

// CUDABuilt tells whether this binary contains the CUDA backend.
const CUDABuilt = false

// ErrNoCUDA is returned for the cuda backend by a binary built without it.
var ErrNoCUDA = errors.New("this provebench was built without the CUDA backend: build it with `make build-cuda` on a host with ICICLE (see docs/gpu.md)")

func openCUDA(Options) (gpu.Backend, error) { return nil, ErrNoCUDA }
