// Package backends opens a prover backend by name. It is the one place that
// knows which backends this binary was built with: the CUDA backend only
// exists in binaries built with the "cuda" tag (make build-cuda).
package backends

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/provebench/provebench/gpu/catalog"
	"github.com/provebench/provebench/gpu/cpu"
	"github.com/provebench/provebench/gpu/prover"
)

// ErrNoCUDA is returned for the cuda backend by a binary built without it.
var ErrNoCUDA = errors.New("this provebench was built without the CUDA backend: build it with `make build-cuda` on a host with ICICLE (see docs/gpu.md)")

// The names Open accepts, as gpu/catalog defines them (what each runs
// on, and the help texts, live there: readers that must not link a prover
// ask catalog).
const (
	CPU       = catalog.CPU
	CUDA      = catalog.CUDA
	Automatic = catalog.Automatic
)

// Built lists the backends this binary contains (Automatic aside).
func Built() []string {
	if CUDABuilt {
		return []string{CPU, CUDA}
	}
	return []string{CPU}
}

// Available says whether this binary has the backend of that name: nil,
// or ErrNoCUDA for the CUDA backend in a binary built without it.
func Available(name string) error {
	if name == CUDA && !CUDABuilt {
		return ErrNoCUDA
	}
	return nil
}

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
func Auto(opts Options) (b prover.Backend, whyNotCUDA error, err error) {
	if !CUDABuilt {
		whyNotCUDA = ErrNoCUDA
	} else if b, whyNotCUDA = openCUDA(opts); whyNotCUDA == nil {
		return b, nil, nil
	}
	b, err = cpu.New(cpu.Options{Devices: opts.Devices, Rand: opts.Rand})
	return b, whyNotCUDA, err
}

// WarnNotCUDA writes the prove command's warning that backend auto
// (OpenExplained) runs on the CPU, and why CUDA was not used.
func WarnNotCUDA(w io.Writer, why error) {
	fmt.Fprintf(w, "provebench: warning: backend auto: CUDA not used, running on the CPU: %v\n", why)
}

// OpenExplained is Open that, for Automatic (or ""), also says why it
// did not use CUDA: whyNotCUDA is nil when it did, and for every other
// name.
func OpenExplained(name string, opts Options) (b prover.Backend, whyNotCUDA error, err error) {
	if name == Automatic || name == "" {
		return Auto(opts)
	}
	b, err = Open(name, opts)
	return b, nil, err
}

// Open returns the named backend: CPU, CUDA, or Automatic (CUDA when this
// binary has it and a GPU answers, else CPU; also for "").
func Open(name string, opts Options) (prover.Backend, error) {
	switch name {
	case CPU:
		return cpu.New(cpu.Options{Devices: opts.Devices, Rand: opts.Rand})
	case CUDA:
		return openCUDA(opts)
	case Automatic, "":
		b, _, err := Auto(opts)
		return b, err
	default:
		return nil, fmt.Errorf("unknown backend %q (want one of %s)", name, strings.Join(catalog.Names(), ", "))
	}
}

// PrintBuilt writes detect's first line: the backends this binary was
// built with.
func PrintBuilt(w io.Writer) {
	fmt.Fprintln(w, "backends: "+strings.Join(Built(), ", "))
}
