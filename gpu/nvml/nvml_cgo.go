//go:build linux && cgo

package nvml

import (
	"errors"
	"fmt"
	"sync"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVML is an initialised NVML session. Its methods are safe for concurrent
// use (with a GPUSample per goroutine); Close ends the session.
type NVML struct {
	// mu guards the session: NVML's C symbols must not be called once
	// Close has shut it down (go-nvml then unloads the library, and a call
	// would jump to an unmapped address).
	mu      sync.RWMutex
	closed  bool
	driver  string
	devices []Device
	dev     []deviceHandle
}

type deviceHandle struct {
	h        gonvml.Device
	memoryV2 bool // nvmlDeviceGetMemoryInfo_v2 works: Used excludes driver-reserved memory
	graphics bool // the graphics process list is supported
}

// Open initialises NVML and enumerates the devices. Without a usable NVML it
// returns an error satisfying errors.Is(err, ErrUnavailable); it never
// panics, since go-nvml loads libnvidia-ml.so.1 with dlopen and reports its
// absence as a return code.
func Open() (*NVML, error) {
	// Nothing but Init may be called before Init succeeds: go-nvml binds
	// NVML's symbols lazily, and calling one with no library loaded
	// crashes the process.
	if ret := gonvml.Init(); ret != gonvml.SUCCESS {
		if ret == gonvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, fmt.Errorf("%w: cannot load libnvidia-ml.so.1 (no NVIDIA driver on this host)", ErrUnavailable)
		}
		return nil, fmt.Errorf("%w: nvmlInit: %w", ErrUnavailable, ret)
	}
	n := &NVML{}
	if err := n.enumerate(); err != nil {
		gonvml.Shutdown()
		return nil, err
	}
	return n, nil
}

func (n *NVML) enumerate() error {
	var ret gonvml.Return
	if n.driver, ret = gonvml.SystemGetDriverVersion(); ret != gonvml.SUCCESS {
		return fmt.Errorf("nvml: driver version: %w", ret)
	}
	count, ret := gonvml.DeviceGetCount()
	if ret != gonvml.SUCCESS {
		return fmt.Errorf("nvml: device count: %w", ret)
	}
	if count == 0 {
		return fmt.Errorf("%w: the NVIDIA driver reports no GPU", ErrUnavailable)
	}
	// The _v2 memory query needs a driver of 2022 or later; calling a
	// symbol the library lacks would abort the process, so look first.
	haveV2 := gonvml.Extensions().LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil
	for i := range count {
		h, ret := gonvml.DeviceGetHandleByIndex(i)
		if ret != gonvml.SUCCESS {
			return fmt.Errorf("nvml: GPU %d: handle: %w", i, ret)
		}
		d := Device{Index: i}
		dh := deviceHandle{h: h}
		if d.Name, ret = h.GetName(); ret != gonvml.SUCCESS {
			return fmt.Errorf("nvml: GPU %d: name: %w", i, ret)
		}
		if d.UUID, ret = h.GetUUID(); ret != gonvml.SUCCESS {
			return fmt.Errorf("nvml: GPU %d: UUID: %w", i, ret)
		}
		if haveV2 {
			if m, ret := h.GetMemoryInfo_v2(); ret == gonvml.SUCCESS {
				dh.memoryV2, d.MemoryBytes = true, m.Total
			}
		}
		if !dh.memoryV2 {
			m, ret := h.GetMemoryInfo()
			if ret != gonvml.SUCCESS {
				return fmt.Errorf("nvml: GPU %d: memory: %w", i, ret)
			}
			d.MemoryBytes = m.Total
		}
		// Optional queries: probe once, so that Sample fails only on real
		// errors.
		if _, ret := h.GetUtilizationRates(); ret == gonvml.SUCCESS {
			d.HasUtilization = true
		} else if !unsupported(ret) {
			return fmt.Errorf("nvml: GPU %d: utilisation: %w", i, ret)
		}
		if _, ret := h.GetComputeRunningProcesses(); ret == gonvml.SUCCESS {
			d.HasProcesses = true
		} else if !unsupported(ret) {
			return fmt.Errorf("nvml: GPU %d: compute processes: %w", i, ret)
		}
		if d.HasProcesses {
			if _, ret := h.GetGraphicsRunningProcesses(); ret == gonvml.SUCCESS {
				dh.graphics = true
			} else if !unsupported(ret) {
				return fmt.Errorf("nvml: GPU %d: graphics processes: %w", i, ret)
			}
		}
		n.devices = append(n.devices, d)
		n.dev = append(n.dev, dh)
	}
	return nil
}

// unsupported reports whether ret means the query does not exist for this
// device or driver, as opposed to a failure.
func unsupported(ret gonvml.Return) bool {
	return ret == gonvml.ERROR_NOT_SUPPORTED || ret == gonvml.ERROR_FUNCTION_NOT_FOUND ||
		ret == gonvml.ERROR_NO_PERMISSION
}

// Close shuts NVML down. It is safe to call more than once; afterwards
// Sample fails.
func (n *NVML) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	if ret := gonvml.Shutdown(); ret != gonvml.SUCCESS {
		return fmt.Errorf("nvml: shutdown: %w", ret)
	}
	return nil
}

// Devices lists the GPUs in NVML's order. The slice is shared: do not
// modify it.
func (n *NVML) Devices() []Device { return n.devices }

// DriverVersion is the NVIDIA driver's version, as nvidia-smi prints it.
func (n *NVML) DriverVersion() string { return n.driver }

// Sample reads every device's memory and utilisation and the memory that
// process pid holds on each, into dst (whose Devices slice is reused).
//
// NVML reports a process's memory on a device as a whole, in whichever list
// names it (compute, graphics, or both for a process with both kinds of
// context), so each device counts it once.
//
// Cost: most of it is the process-list query, which takes the driver's
// locks, then the memory query; it grows with the device count, so on a
// host of many GPUs sample NVML every few ticks of the sampler, not every
// tick (docs/gpu.md, "What an NVML sample costs", has the figures;
// BenchmarkGPUSample measures it on a host).
func (n *NVML) Sample(pid int, dst *GPUSample) error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		return errors.New("nvml: sample after Close")
	}
	if cap(dst.Devices) < len(n.dev) {
		dst.Devices = make([]DeviceSample, len(n.dev))
	}
	dst.Devices = dst.Devices[:len(n.dev)]
	dst.ProcessMemoryUnknown = false
	for i, dh := range n.dev {
		ds := &dst.Devices[i]
		*ds = DeviceSample{}
		var ret gonvml.Return
		if dh.memoryV2 {
			var m gonvml.Memory_v2
			m, ret = dh.h.GetMemoryInfo_v2()
			ds.MemoryUsedBytes = m.Used
		} else {
			var m gonvml.Memory
			m, ret = dh.h.GetMemoryInfo()
			ds.MemoryUsedBytes = m.Used
		}
		if ret != gonvml.SUCCESS {
			return fmt.Errorf("nvml: GPU %d: memory: %w", i, ret)
		}
		if n.devices[i].HasUtilization {
			u, ret := dh.h.GetUtilizationRates()
			if ret != gonvml.SUCCESS {
				return fmt.Errorf("nvml: GPU %d: utilisation: %w", i, ret)
			}
			ds.UtilizationPercent = float64(u.Gpu)
		}
		if !n.devices[i].HasProcesses {
			continue
		}
		compute, ret := dh.h.GetComputeRunningProcesses()
		if ret != gonvml.SUCCESS {
			return fmt.Errorf("nvml: GPU %d: compute processes: %w", i, ret)
		}
		mem, present, unknown := processMemory(compute, pid)
		// A CUDA process is always in the compute list. Only a process
		// with graphics contexts alone (Vulkan, OpenGL) needs the graphics
		// list, whose query costs about as much as the first even when
		// the list is empty, so it is read only when the first lacks pid.
		if !present && dh.graphics {
			graphics, ret := dh.h.GetGraphicsRunningProcesses()
			if ret != gonvml.SUCCESS {
				return fmt.Errorf("nvml: GPU %d: graphics processes: %w", i, ret)
			}
			mem, present, unknown = processMemory(graphics, pid)
		}
		ds.ProcessMemoryBytes, ds.ProcessPresent = mem, present
		dst.ProcessMemoryUnknown = dst.ProcessMemoryUnknown || unknown
	}
	dst.summarise(n.devices)
	return nil
}

// processMemory sums the memory of pid's entries in one process list (a
// process has one entry per GPU or compute instance it uses).
func processMemory(list []gonvml.ProcessInfo, pid int) (bytes uint64, present, unknown bool) {
	for _, p := range list {
		if int(p.Pid) != pid {
			continue
		}
		present = true
		if p.UsedGpuMemory == notAvailable {
			unknown = true
			continue
		}
		bytes += p.UsedGpuMemory
	}
	return bytes, present, unknown
}

// notAvailable is NVML_VALUE_NOT_AVAILABLE as an unsigned long long.
const notAvailable = ^uint64(0)

// processes lists device i's processes, for Describe.
func (n *NVML) processes(i int) ([]process, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		return nil, errors.New("nvml: query after Close")
	}
	var out []process
	add := func(kind string, list []gonvml.ProcessInfo) {
		for _, p := range list {
			out = append(out, process{pid: p.Pid, kind: kind, memoryBytes: p.UsedGpuMemory, memoryUnknown: p.UsedGpuMemory == notAvailable})
		}
	}
	dh := n.dev[i]
	compute, ret := dh.h.GetComputeRunningProcesses()
	if ret != gonvml.SUCCESS {
		return nil, fmt.Errorf("nvml: GPU %d: compute processes: %w", i, ret)
	}
	add("compute", compute)
	if dh.graphics {
		graphics, ret := dh.h.GetGraphicsRunningProcesses()
		if ret != gonvml.SUCCESS {
			return nil, fmt.Errorf("nvml: GPU %d: graphics processes: %w", i, ret)
		}
		add("graphics", graphics)
	}
	return out, nil
}

// EnergyMillijoules reads the total energy each listed device (NVML
// indexes; every device when nil) has consumed since the driver loaded,
// from NVML's counter (nvmlDeviceGetTotalEnergyConsumption, Volta and
// later), summed. The difference of two reads is the energy between them.
// It fails with ErrUnavailable where a device does not count energy.
func (n *NVML) EnergyMillijoules(devices []int) (uint64, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		return 0, errors.New("nvml: closed")
	}
	if devices == nil {
		for i := range n.dev {
			devices = append(devices, i)
		}
	}
	var total uint64
	for _, i := range devices {
		if i < 0 || i >= len(n.dev) {
			return 0, fmt.Errorf("nvml: device %d of %d", i, len(n.dev))
		}
		mj, ret := n.dev[i].h.GetTotalEnergyConsumption()
		if unsupported(ret) {
			return 0, fmt.Errorf("%w: device %d does not count energy: %w", ErrUnavailable, i, ret)
		}
		if ret != gonvml.SUCCESS {
			return 0, fmt.Errorf("nvml: device %d energy: %w", i, ret)
		}
		total += mj
	}
	return total, nil
}
