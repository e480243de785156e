//go:build icicle

package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/consensys/gnark/backend/accelerated/icicle"
	icicle_groth16 "github.com/consensys/gnark/backend/accelerated/icicle/groth16"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	icicle_runtime "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"
)

// proverName names this build's prover in results and benchmarks.
const proverName = "gnark-icicle"

// icicleProver is gnark's ICICLE Groth16 prover
// (backend/accelerated/icicle/groth16), on ICICLE's CUDA device (or its CPU
// device, for tests on a host without a GPU).
type icicleProver struct {
	ccs    constraint.ConstraintSystem
	pk     groth16.ProvingKey
	device icicle_runtime.Device
	opts   []icicle.Option
}

func newProver(o *options) (prover, error) {
	backend := icicle.CUDA
	switch o.icicleDevice {
	case "CUDA":
	case "CPU":
		backend = icicle.CPU
	default:
		return nil, fmt.Errorf("--icicle-device %q: want CUDA or CPU", o.icicleDevice)
	}
	// gnark loads the backend folder in directory order, where a curve
	// library opened before its field library fails silently (every MSM
	// then says "not supported on device"): open them in dependency order
	// first, as provebench's CUDA backend does; gnark's own load then
	// finds them open. An empty folder loads nothing, which the CPU device
	// needs (the front end carries it).
	dir := o.icicleBackendDir
	if err := loadBackend(dir); err != nil {
		return nil, err
	}
	if dir == "" {
		dir = o.tempDir
	}
	opts := []icicle.Option{icicle.WithBackend(backend), icicle.WithBackendLibrary(dir), icicle.WithPinKeysToGPU(o.pinKeys)}
	return &icicleProver{device: icicle_runtime.CreateDevice(backend.String(), 0), opts: opts}, nil
}

var backendOrder = []string{"_device", "_field_", "_curve_"}

func loadBackend(dir string) error {
	if dir == "" {
		return nil
	}
	var libs []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n := e.Name(); !e.IsDir() && strings.HasPrefix(n, "libicicle_backend_") && strings.HasSuffix(n, ".so") {
			libs = append(libs, path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ICICLE backend folder: %w", err)
	}
	rank := func(p string) int {
		for i, part := range backendOrder {
			if strings.Contains(filepath.Base(p), part) {
				return i
			}
		}
		return len(backendOrder)
	}
	sort.SliceStable(libs, func(i, j int) bool { return rank(libs[i]) < rank(libs[j]) })
	for _, lib := range libs {
		if code := icicle_runtime.LoadBackend(lib, false); code != icicle_runtime.Success {
			return fmt.Errorf("load ICICLE backend %s: %s", lib, code.AsString())
		}
	}
	return nil
}

func (p *icicleProver) setup(ccs constraint.ConstraintSystem, real bool) (groth16.VerifyingKey, error) {
	p.ccs = ccs
	if !real {
		pk, err := icicle_groth16.DummySetup(ccs)
		p.pk = pk
		return nil, err
	}
	pk, vk, err := icicle_groth16.Setup(ccs)
	p.pk = pk
	return vk, err
}

func (p *icicleProver) prove(w witness.Witness) (groth16.Proof, error) {
	return icicle_groth16.Prove(p.ccs, p.pk, w, p.opts...)
}

// deviceMemory is ICICLE's view of the device: total minus free memory
// (cudaMemGetInfo on CUDA), the whole device's, every process's.
func (p *icicleProver) deviceMemory() (used, total uint64, ok bool) {
	done := make(chan struct{})
	icicle_runtime.RunOnDevice(&p.device, func(...any) {
		defer close(done)
		m, code := icicle_runtime.GetAvailableMemory()
		if code != icicle_runtime.Success || m == nil || m.Total == 0 {
			return
		}
		used, total, ok = uint64(m.Total-m.Free), uint64(m.Total), true
	})
	<-done
	return used, total, ok
}

func (p *icicleProver) close() {
	if pk, ok := p.pk.(interface{ FreeGPUResources() }); ok {
		pk.FreeGPUResources()
	}
}
