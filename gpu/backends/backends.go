// Package backends opens a prover backend by name. It is the one place that
// knows which backends this binary was built with: the CUDA backend only
// exists in binaries built with the "cuda" tag (make build-cuda).
package backends

import (
	"errors"
	"fmt"
	"io"

	"github.com/provebench/provebench/gpu"
	"github.com/provebench/provebench/gpu/cpu"
)

// ErrNoCUDA is returned for the cuda backend by a binary built without it.
var ErrNoCUDA = errors.New("this provebench was built without the CUDA backend: build it with `make build-cuda` on a host with ICICLE (see docs/gpu.md)")

// Names lists the backend names Open accepts.
var Names = []string{"cpu", "cuda", "auto"}

// Options are the settings common to every backend.
type Options struct {
	// Devices limits the devices used: the CPU backend simulates this many
	// devices (default 1); the CUDA backend uses the first Devices GPUs
	// (default all).
	Devices int
	// Rand supplies the blinding; crypto/rand when nil.
	Rand io.Reader
}

// Auto opens the CUDA backend when this binary has it and a GPU answers,
// else the CPU backend; whyNotCUDA then says why CUDA was not used, for the
// user who asked for auto on a host they thought had a GPU.
func Auto(opts Options) (b gpu.Backend, whyNotCUDA error, err error) {
	if !CUDABuilt {
		whyNotCUDA = ErrNoCUDA
	} else if b, whyNotCUDA = openCUDA(opts); whyNotCUDA == nil {
		return b, nil, nil
	}
	b, err = cpu.New(cpu.Options{Devices: opts.Devices, Rand: opts.Rand})
	return b, whyNotCUDA, err
}

// Open returns the named backend: "cpu", "cuda", or "auto" (CUDA when this
// binary has it and a GPU answers, else CPU).
func Open(name string, opts Options) (gpu.Backend, error) {
	switch name {
	case "cpu":
		return cpu.New(cpu.Options{Devices: opts.Devices, Rand: opts.Rand})
	case "cuda":
		return openCUDA(opts)
	case "auto", "":
		b, _, err := Auto(opts)
		return b, err
	default:
		return nil, fmt.Errorf("unknown backend %q (want cpu, cuda or auto)", name)
	}
}
