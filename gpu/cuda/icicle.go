//go:build cuda

package cuda

/*
#cgo LDFLAGS: -licicle_field_bls12_381 -ldl
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

// pb_why_not_loaded returns NULL if the library at path is loaded, else why
// opening it fails (ICICLE's loader only logs that at debug level).
static const char* pb_why_not_loaded(const char* path) {
	void* h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (h) { dlclose(h); return NULL; }
	h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (h) { dlclose(h); return "it opens now, but ICICLE did not load it"; }
	return dlerror();
}

typedef struct scalar_t scalar_t;
typedef struct VecOpsConfig VecOpsConfig;

// From ICICLE's scalar field API (libicicle_field_bls12_381). The Go wrapper
// (bls12381.FromMontgomery) always runs it synchronously on the default
// stream, which would serialise it against every other stream of the device.
int bls12_381_scalar_convert_montgomery(
	const scalar_t* d_in, size_t n, bool is_into, const VecOpsConfig* ctx, scalar_t* d_out);
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/core"
	icicle "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"
	"github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime/config_extension"
)

// icicleError is a failed ICICLE call.
type icicleError struct {
	op   string
	code icicle.EIcicleError
}

func (e *icicleError) Error() string {
	return fmt.Sprintf("icicle: %s: %s", e.op, strings.TrimPrefix(e.code.AsString(), "EIcicleError."))
}

// check turns an ICICLE status into an error naming the operation.
func check(op string, code icicle.EIcicleError) error {
	if code == icicle.Success {
		return nil
	}
	return &icicleError{op: op, code: code}
}

// Device types ICICLE registers.
const (
	DeviceCUDA = "CUDA"
	DeviceCPU  = "CPU"
)

// backendLibraryOrder is the order in which ICICLE's device backend libraries
// must be opened: the curve library needs the field library, which needs the
// device library. ICICLE's own loader opens a folder's files in directory
// order, with RTLD_LOCAL, and only logs a failure at debug level: a curve
// library opened before its field library fails silently, and every MSM then
// reports "not supported on device CUDA".
var backendLibraryOrder = []string{"_device", "_field_", "_curve_"}

// loadBackend opens ICICLE's device backend libraries under dir (the flat
// prebuilt folder or an ICICLE install's lib/backend tree) in dependency
// order.
func loadBackend(dir string) error {
	if dir == "" {
		return errors.New("no ICICLE backend folder: set ICICLE_BACKEND_INSTALL_DIR (or Options.BackendDir) to the folder holding libicicle_backend_cuda_*.so")
	}
	var libs []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if !e.IsDir() && strings.HasPrefix(name, "libicicle_backend_") && strings.HasSuffix(name, ".so") {
			libs = append(libs, path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ICICLE backend folder: %w", err)
	}
	if len(libs) == 0 {
		return fmt.Errorf("ICICLE backend folder %s holds no libicicle_backend_*.so", dir)
	}
	rank := func(path string) int {
		for i, part := range backendLibraryOrder {
			if strings.Contains(filepath.Base(path), part) {
				return i
			}
		}
		return len(backendLibraryOrder)
	}
	sort.SliceStable(libs, func(i, j int) bool { return rank(libs[i]) < rank(libs[j]) })
	for _, lib := range libs {
		if err := check("load backend "+lib, icicle.LoadBackend(lib, false)); err != nil {
			return err
		}
		cpath := C.CString(lib)
		why := C.pb_why_not_loaded(cpath)
		C.free(unsafe.Pointer(cpath))
		if why != nil {
			return fmt.Errorf("ICICLE backend library %s did not load: %s", lib, C.GoString(why))
		}
	}
	return nil
}

// backendDir is where ICICLE's device backend libraries are looked for when
// Options.BackendDir is empty.
func backendDir() string {
	return os.Getenv("ICICLE_BACKEND_INSTALL_DIR")
}

// fromMontgomery converts a device vector of scalars out of Montgomery form
// in place, queued on stream.
func fromMontgomery(v core.DeviceSlice, stream icicle.Stream, ext config_extension.ConfigExtensionHandler) icicle.EIcicleError {
	cfg := core.DefaultVecOpsConfig()
	cfg.StreamHandle = stream
	cfg.IsAsync = true
	cfg.Ext = ext
	in, _, out, cfgPtr, n := core.VecOpCheck(v, v, v, &cfg)
	return icicle.EIcicleError(C.bls12_381_scalar_convert_montgomery(
		(*C.scalar_t)(in), C.size_t(n), false, (*C.VecOpsConfig)(cfgPtr), (*C.scalar_t)(out)))
}

// cpuThreadsKey is the configuration extension key of the thread count of
// ICICLE's CPU vector operations.
const cpuThreadsKey = "n_threads"

// cpuVecExt returns the configuration extension that ICICLE's CPU device
// needs for vector operations: left alone it uses one thread less than the
// host has and asserts at least one worker besides the caller, so on a
// two-thread host every vector operation aborts the process.
func cpuVecExt() *config_extension.ConfigExtension {
	ext := config_extension.Create()
	ext.SetInt(cpuThreadsKey, max(2, goruntime.NumCPU()))
	return ext
}

// errClosed is returned for work submitted to a closed backend.
var errClosed = errors.New("cuda backend: closed")

// thread runs functions one at a time, in submission order, on one OS thread
// on which an ICICLE device is selected: ICICLE's current device is per OS
// thread, and goroutines migrate between threads.
type thread struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []func()
	closed  bool
	final   func()
	done    chan struct{}
}

// startThread starts a thread with dev selected.
func startThread(dev icicle.Device) (*thread, error) {
	t := &thread{done: make(chan struct{})}
	t.cond = sync.NewCond(&t.mu)
	ready := make(chan error, 1)
	go func() {
		// The goroutine never unlocks: when it returns, its thread, with
		// ICICLE's per-thread device state, exits with it.
		goruntime.LockOSThread()
		defer close(t.done)
		if err := check("set device", icicle.SetDevice(&dev)); err != nil {
			ready <- err
			return
		}
		ready <- nil
		t.loop()
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return t, nil
}

func (t *thread) loop() {
	for {
		t.mu.Lock()
		for len(t.pending) == 0 && !t.closed {
			t.cond.Wait()
		}
		if len(t.pending) == 0 {
			final := t.final
			t.mu.Unlock()
			if final != nil {
				final()
			}
			return
		}
		fn := t.pending[0]
		t.pending[0] = nil
		t.pending = t.pending[1:]
		t.mu.Unlock()
		fn()
	}
}

// submit queues fn.
func (t *thread) submit(fn func()) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errClosed
	}
	t.pending = append(t.pending, fn)
	t.cond.Signal()
	return nil
}

// do runs fn on the thread and returns its error.
func (t *thread) do(fn func() error) error {
	errc := make(chan error, 1)
	if err := t.submit(func() { errc <- fn() }); err != nil {
		return err
	}
	return <-errc
}

// close runs what is queued, then final (if not nil) on the same thread,
// and stops the thread.
func (t *thread) close(final func()) {
	t.mu.Lock()
	if !t.closed {
		t.closed = true
		t.final = final
		t.cond.Signal()
	}
	t.mu.Unlock()
	<-t.done
}
