//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// A few entry points of the CUDA driver API (libcuda.so.1, installed with
// the NVIDIA driver), opened at run time so that nothing links against CUDA:
// ICICLE's backend libraries carry their own static CUDA runtime, whose
// streams are driver streams, so events recorded here time their work.

typedef int pb_CUresult;
typedef void* pb_CUevent;
typedef void* pb_CUstream;
typedef void* pb_CUcontext;
typedef void* pb_CUmemoryPool;
typedef int pb_CUdevice;

typedef struct {
	void* lib;
	pb_CUresult (*init)(unsigned int);
	pb_CUresult (*ctxGetCurrent)(pb_CUcontext*);
	pb_CUresult (*ctxSetCurrent)(pb_CUcontext);
	pb_CUresult (*eventCreate)(pb_CUevent*, unsigned int);
	pb_CUresult (*eventRecord)(pb_CUevent, pb_CUstream);
	pb_CUresult (*eventSynchronize)(pb_CUevent);
	pb_CUresult (*eventElapsedTime)(float*, pb_CUevent, pb_CUevent);
	pb_CUresult (*eventDestroy)(pb_CUevent);
	pb_CUresult (*getErrorName)(pb_CUresult, const char**);
	pb_CUresult (*deviceGet)(pb_CUdevice*, int);
	pb_CUresult (*deviceGetDefaultMemPool)(pb_CUmemoryPool*, pb_CUdevice);
	pb_CUresult (*memPoolSetAttribute)(pb_CUmemoryPool, int, void*);
	pb_CUresult (*memHostRegister)(void*, size_t, unsigned int);
	pb_CUresult (*memHostUnregister)(void*);
	pb_CUresult (*primaryCtxSetFlags)(pb_CUdevice, unsigned int);
	pb_CUresult (*primaryCtxGetState)(pb_CUdevice, unsigned int*, int*);
	pb_CUresult (*deviceGetCount)(int*);
} pb_cuda;

static const char* pb_cuda_open(pb_cuda* d) {
	d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!d->lib) return dlerror();
#define PB_SYM(field, name) \
	if (!(*(void**)(&d->field) = dlsym(d->lib, name))) return "libcuda.so.1 has no " name;
	PB_SYM(init, "cuInit")
	PB_SYM(ctxGetCurrent, "cuCtxGetCurrent")
	PB_SYM(ctxSetCurrent, "cuCtxSetCurrent")
	PB_SYM(eventCreate, "cuEventCreate")
	PB_SYM(eventRecord, "cuEventRecord")
	PB_SYM(eventSynchronize, "cuEventSynchronize")
	PB_SYM(eventElapsedTime, "cuEventElapsedTime")
	PB_SYM(eventDestroy, "cuEventDestroy_v2")
	PB_SYM(getErrorName, "cuGetErrorName")
	PB_SYM(deviceGet, "cuDeviceGet")
	PB_SYM(deviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool")
	PB_SYM(memPoolSetAttribute, "cuMemPoolSetAttribute")
	PB_SYM(memHostRegister, "cuMemHostRegister_v2")
	PB_SYM(memHostUnregister, "cuMemHostUnregister")
	PB_SYM(primaryCtxSetFlags, "cuDevicePrimaryCtxSetFlags_v2")
	PB_SYM(primaryCtxGetState, "cuDevicePrimaryCtxGetState")
	PB_SYM(deviceGetCount, "cuDeviceGetCount")
#undef PB_SYM
	return NULL;
}

static void pb_cuda_close(pb_cuda* d) { if (d->lib) dlclose(d->lib); d->lib = NULL; }
static pb_CUresult pb_init(pb_cuda* d) { return d->init(0); }
static pb_CUresult pb_ctx_get(pb_cuda* d, pb_CUcontext* c) { return d->ctxGetCurrent(c); }
static pb_CUresult pb_ctx_set(pb_cuda* d, pb_CUcontext c) { return d->ctxSetCurrent(c); }
static pb_CUresult pb_ctx_current(pb_cuda* d, int* has) {
	pb_CUcontext c = NULL;
	pb_CUresult r = d->ctxGetCurrent(&c);
	*has = c != NULL;
	return r;
}
// CU_EVENT_BLOCKING_SYNC (1): a waiting thread sleeps instead of spinning a core.
static pb_CUresult pb_event_create(pb_cuda* d, pb_CUevent* e) { return d->eventCreate(e, 1); }
static pb_CUresult pb_event_record(pb_cuda* d, pb_CUevent e, void* s) { return d->eventRecord(e, s); }
static pb_CUresult pb_event_sync(pb_cuda* d, pb_CUevent e) { return d->eventSynchronize(e); }
static pb_CUresult pb_event_elapsed(pb_cuda* d, float* ms, pb_CUevent a, pb_CUevent b) { return d->eventElapsedTime(ms, a, b); }
static pb_CUresult pb_event_destroy(pb_cuda* d, pb_CUevent e) { return d->eventDestroy(e); }
// CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC (2) and
// CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES (3) set to 0.
static pb_CUresult pb_pool_reuse_by_dependency_only(pb_cuda* d, int ordinal) {
	pb_CUdevice dev;
	pb_CUmemoryPool pool;
	int off = 0;
	pb_CUresult r = d->deviceGet(&dev, ordinal);
	if (r == 0) r = d->deviceGetDefaultMemPool(&pool, dev);
	if (r == 0) r = d->memPoolSetAttribute(pool, 2, &off);
	if (r == 0) r = d->memPoolSetAttribute(pool, 3, &off);
	return r;
}
// Sets how a host thread waits for the device in the device's primary
// context (the one ICICLE's runtime uses): CU_CTX_SCHED_SPIN (1),
// CU_CTX_SCHED_YIELD (2) or CU_CTX_SCHED_BLOCKING_SYNC (4). *active tells
// whether the context was already up (the flags then apply from its next
// creation on some drivers).
static pb_CUresult pb_device_count(pb_cuda* d, int* n) { return d->deviceGetCount(n); }
static pb_CUresult pb_set_sched(pb_cuda* d, int ordinal, unsigned int flags, int* active) {
	pb_CUdevice dev;
	unsigned int old = 0;
	pb_CUresult r = d->deviceGet(&dev, ordinal);
	if (r == 0) r = d->primaryCtxGetState(dev, &old, active);
	if (r == 0) r = d->primaryCtxSetFlags(dev, flags);
	return r;
}
// CU_MEMHOSTREGISTER_PORTABLE (1): page-locked for every context.
static pb_CUresult pb_pin(pb_cuda* d, void* p, size_t n) { return d->memHostRegister(p, n, 1); }
static pb_CUresult pb_unpin(pb_cuda* d, void* p) { return d->memHostUnregister(p); }
static const char* pb_error_name(pb_cuda* d, pb_CUresult r) {
	const char* s = NULL;
	if (d->getErrorName(r, &s) != 0 || s == NULL) return "unknown CUDA error";
	return s;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	icicle "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"
)

// driver is the CUDA driver API, opened at run time.
type driver struct {
	c *C.pb_cuda // C memory: the struct holds function pointers C calls through
}

func openDriver() (*driver, error) {
	c := (*C.pb_cuda)(C.calloc(1, C.size_t(unsafe.Sizeof(C.pb_cuda{}))))
	if msg := C.pb_cuda_open(c); msg != nil {
		err := fmt.Errorf("cuda driver: %s", C.GoString(msg))
		C.pb_cuda_close(c)
		C.free(unsafe.Pointer(c))
		return nil, err
	}
	d := &driver{c: c}
	if err := d.check("cuInit", C.pb_init(c)); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *driver) close() {
	if d == nil || d.c == nil {
		return
	}
	C.pb_cuda_close(d.c)
	C.free(unsafe.Pointer(d.c))
	d.c = nil
}

func (d *driver) check(op string, r C.pb_CUresult) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("cuda driver: %s: %s (%d)", op, C.GoString(C.pb_error_name(d.c, r)), int(r))
}

// requireContext checks that the calling thread has a current CUDA context,
// which ICICLE's set-device makes current (CUDA 12 and later); events are
// created in it.
func (d *driver) requireContext() error {
	var has C.int
	if err := d.check("cuCtxGetCurrent", C.pb_ctx_current(d.c, &has)); err != nil {
		return err
	}
	if has == 0 {
		return errors.New("cuda driver: no current CUDA context after ICICLE selected the device")
	}
	return nil
}

// Sync modes: how a host thread waits for the device (Options.Sync).
const (
	// SyncBlock: the waiting thread sleeps until the device signals
	// (CU_CTX_SCHED_BLOCKING_SYNC). A few microseconds more per wait, and
	// no core spent spinning: the default.
	SyncBlock = "block"
	// SyncSpin: the waiting thread spins on a core (CUDA's default with
	// fewer busy contexts than cores), costing a core per waiting thread
	// for as long as the device works, which shows in the process's CPU
	// time and takes a core from synthesis.
	SyncSpin = "spin"
	// SyncYield: spins, yielding the core between checks.
	SyncYield = "yield"
)

// setSyncAll sets how host threads wait for every device's work (setSync).
func (d *driver) setSyncAll(mode string) error {
	var n C.int
	if err := d.check("cuDeviceGetCount", C.pb_device_count(d.c, &n)); err != nil {
		return err
	}
	for ordinal := range int(n) {
		if err := d.setSync(ordinal, mode); err != nil {
			return err
		}
	}
	return nil
}

// setSync sets how host threads wait for the device ordinal's work. It
// must run before anything makes the device's primary context (loading
// ICICLE's CUDA backend does), and fails when the context is already up,
// since the flags then apply only from its next creation.
func (d *driver) setSync(ordinal int, mode string) error {
	flags := map[string]C.uint{SyncSpin: 1, SyncYield: 2, SyncBlock: 4}[mode]
	if flags == 0 {
		return fmt.Errorf("cuda driver: sync mode %q: want %s, %s or %s", mode, SyncBlock, SyncSpin, SyncYield)
	}
	var active C.int
	if err := d.check("cuDevicePrimaryCtxSetFlags", C.pb_set_sched(d.c, C.int(ordinal), flags, &active)); err != nil {
		return err
	}
	if active != 0 {
		return fmt.Errorf("cuda driver: device %d's context was already up when the sync mode was set", ordinal)
	}
	return nil
}

// reuseByDependencyOnly restricts the reuse of stream-ordered frees in the
// device's default memory pool (the one ICICLE's allocations come from) to
// allocations that are ordered after the free: on the same stream, or
// through an event.
//
// ICICLE's MSM needs it once anything allocates on another stream while an
// MSM runs (here: Start's uploads during the previous partition's MSMs). Its
// bucket accumulation (backend/cuda/src/msm/cuda_msm.cuh, v3.2.2) frees the
// sorted bucket indices on the MSM's stream while its large-bucket stream
// still reads them, and joins that stream only afterwards. With the default
// pool settings an allocation on another stream may take that memory as soon
// as the free is reached, and the upload then overwrites indices still in use:
// "an illegal memory access was encountered". Disabling opportunistic and
// driver-inserted reuse leaves ICICLE's own allocations, which are ordered
// after the join, free to reuse the memory, and gives the uploads other
// memory.
func (d *driver) reuseByDependencyOnly(ordinal int) error {
	return d.check("configure memory pool", C.pb_pool_reuse_by_dependency_only(d.c, C.int(ordinal)))
}

// cuContext is a CUDA context, as the driver API names it.
type cuContext struct{ c C.pb_CUcontext }

// currentContext is the calling thread's current context (ICICLE's
// set-device makes the device's primary context current).
func (d *driver) currentContext() (cuContext, error) {
	var c C.pb_CUcontext
	if err := d.check("cuCtxGetCurrent", C.pb_ctx_get(d.c, &c)); err != nil {
		return cuContext{}, err
	}
	if c == nil {
		return cuContext{}, errors.New("cuda driver: no current CUDA context")
	}
	return cuContext{c}, nil
}

// makeCurrent makes ctx current on the calling thread, which must be locked
// to its goroutine.
func (d *driver) makeCurrent(ctx cuContext) error {
	return d.check("cuCtxSetCurrent", C.pb_ctx_set(d.c, ctx.c))
}

// pin page-locks n bytes of host memory at p, so copies from it run as
// direct DMA instead of through the driver's staging buffer.
func (d *driver) pin(p unsafe.Pointer, n int) error {
	return d.check("cuMemHostRegister", C.pb_pin(d.c, p, C.size_t(n)))
}

// unpin undoes pin.
func (d *driver) unpin(p unsafe.Pointer) error {
	return d.check("cuMemHostUnregister", C.pb_unpin(d.c, p))
}

// stamp is a point in a device stream. On a GPU it is a CUDA event, whose
// time is read once the stream has passed it; on ICICLE's CPU device, which
// runs every call to completion before returning, it is the host time.
type stamp struct {
	ev C.pb_CUevent
	at time.Time
}

// clock takes stamps on one kind of device. A nil driver means the device is
// synchronous (ICICLE's CPU device).
type clock struct{ drv *driver }

// record puts a stamp into a stream.
func (c clock) record(s icicle.Stream) (stamp, error) {
	if c.drv == nil {
		return stamp{at: time.Now()}, nil
	}
	var ev C.pb_CUevent
	if err := c.drv.check("cuEventCreate", C.pb_event_create(c.drv.c, &ev)); err != nil {
		return stamp{}, err
	}
	if err := c.drv.check("cuEventRecord", C.pb_event_record(c.drv.c, ev, unsafe.Pointer(s))); err != nil {
		C.pb_event_destroy(c.drv.c, ev)
		return stamp{}, err
	}
	return stamp{ev: ev}, nil
}

// wait blocks until the stream has passed the stamp.
func (c clock) wait(s stamp) error {
	if c.drv == nil || s.ev == nil {
		return nil
	}
	return c.drv.check("cuEventSynchronize", C.pb_event_sync(c.drv.c, s.ev))
}

// between is the device time from one stamp to a later one of the same
// stream; both must have been passed.
func (c clock) between(from, to stamp) (time.Duration, error) {
	if c.drv == nil {
		return to.at.Sub(from.at), nil
	}
	var ms C.float
	if err := c.drv.check("cuEventElapsedTime", C.pb_event_elapsed(c.drv.c, &ms, from.ev, to.ev)); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// release frees the stamps' events.
func (c clock) release(stamps ...stamp) {
	if c.drv == nil {
		return
	}
	for _, s := range stamps {
		if s.ev != nil {
			C.pb_event_destroy(c.drv.c, s.ev)
		}
	}
}
