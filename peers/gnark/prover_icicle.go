//go:build icicle

package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/consensys/gnark/backend/accelerated/icicle"
	icicle_bls12381 "github.com/consensys/gnark/backend/accelerated/icicle/groth16/bls12-381"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs_bls12381 "github.com/consensys/gnark/constraint/bls12-381"
	icicle_runtime "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"
)

// proverName names this build's prover in results and benchmarks.
const proverName = "gnark-icicle"

// icicleProver is gnark's ICICLE Groth16 prover for BLS12-381
// (backend/accelerated/icicle/groth16/bls12-381), on ICICLE's CUDA device
// (or its CPU device, for tests on a host without a GPU). It calls the
// curve's package, not backend/accelerated/icicle/groth16, which imports all
// four of gnark's ICICLE curves and so links ICICLE's front end for each
// (libicicle_curve_bn254, _bls12_377, _bw6_761): provebench's front end has
// BLS12-381 only. What that package's Prove adds, loading the backend and
// warming the device once, is done here (newProver, warmUp).
type icicleProver struct {
	ccs    *cs_bls12381.R1CS
	pk     *icicle_bls12381.ProvingKey
	device icicle_runtime.Device
	cfg    *icicle.Config
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
	// ICICLE's own loader opens a folder in directory order, where a curve
	// library opened before its field library fails silently (every MSM
	// then says "not supported on device"): open them in dependency order,
	// as provebench's CUDA backend does. The CPU device is in the front
	// end: no folder needed.
	if err := loadBackend(o.icicleBackendDir); err != nil {
		return nil, err
	}
	cfg, err := icicle.NewConfig(icicle.WithBackend(backend), icicle.WithPinKeysToGPU(o.pinKeys))
	if err != nil {
		return nil, err
	}
	p := &icicleProver{device: icicle_runtime.CreateDevice(backend.String(), 0), cfg: cfg}
	return p, p.warmUp()
}

// warmUp creates a stream on the device and warms it, as gnark's Prove
// does once per process.
func (p *icicleProver) warmUp() error {
	var code icicle_runtime.EIcicleError
	done := make(chan struct{})
	icicle_runtime.RunOnDevice(&p.device, func(...any) {
		defer close(done)
		var stream icicle_runtime.Stream
		if stream, code = icicle_runtime.CreateStream(); code == icicle_runtime.Success {
			code = icicle_runtime.WarmUpDevice(stream)
		}
	})
	<-done
	// ICICLE's CPU device has nothing to warm.
	if code != icicle_runtime.Success && code != icicle_runtime.ApiNotImplemented {
		return fmt.Errorf("warm up ICICLE %s device: %s", p.device.GetDeviceType(), code.AsString())
	}
	return nil
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
	r1cs, ok := ccs.(*cs_bls12381.R1CS)
	if !ok {
		return nil, fmt.Errorf("constraint system %T is not a BLS12-381 R1CS", ccs)
	}
	p.ccs, p.pk = r1cs, &icicle_bls12381.ProvingKey{}
	if !real {
		return nil, groth16_bls12381.DummySetup(r1cs, &p.pk.ProvingKey)
	}
	var vk groth16_bls12381.VerifyingKey
	if err := groth16_bls12381.Setup(r1cs, &p.pk.ProvingKey, &vk); err != nil {
		return nil, err
	}
	return &vk, nil
}

func (p *icicleProver) prove(w witness.Witness) (groth16.Proof, error) {
	return icicle_bls12381.Prove(p.ccs, p.pk, w, p.cfg)
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

// close frees the key's device memory on the device's own thread: ICICLE
// checks that a device slice is freed on the device it was made on, and
// gnark pins the key from RunOnDevice (freed from the main goroutine, it
// panics "Attempt to use DeviceSlice on a different device").
func (p *icicleProver) close() {
	if p.pk == nil {
		return
	}
	done := make(chan struct{})
	icicle_runtime.RunOnDevice(&p.device, func(...any) {
		defer close(done)
		p.pk.FreeGPUResources()
	})
	<-done
}
