// Package nvml samples NVIDIA GPUs through NVML (github.com/NVIDIA/go-nvml):
// memory in use per device and per process, and GPU utilisation, cheaply
// enough to call every sampling interval.
//
// NVML is optional. On a host without the NVIDIA driver (CI, the CPU
// backend's usual hosts), and in builds without cgo, Open fails with an error
// satisfying errors.Is(err, ErrUnavailable), and the caller records GPU
// figures as absent rather than zero.
//
// Which devices a figure covers: the run's devices are those on which the
// sampled process holds a context (NVML lists it as a compute or graphics
// process). While it holds none — before its first CUDA call, with the CPU
// backend, or in a container whose PID namespace hides the host pid that
// NVML reports — the run's devices are all devices. On a host with one GPU,
// or a container that sees only its own GPUs, both are the same.
package nvml

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/provebench/provebench/internal/units"
)

// ErrUnavailable marks an Open that found no usable NVML: no driver library,
// no driver loaded, no permission, no GPU, or a build without cgo.
var ErrUnavailable = errors.New("NVML unavailable")

// Device is one GPU as NVML enumerates it (PCI bus order, which need not be
// CUDA's default order).
type Device struct {
	Index       int
	Name        string
	UUID        string
	MemoryBytes uint64
	// HasUtilization tells whether the device reports utilisation (MIG
	// instances and some virtual GPUs do not); without it the device's
	// UtilizationPercent is always 0 and counts in no mean.
	HasUtilization bool
	// HasProcesses tells whether the device lists the processes using it;
	// without it ProcessPresent is always false.
	HasProcesses bool
}

// GPUSample is one reading of the GPUs for one process.
type GPUSample struct {
	// ProcessMemoryBytes is the GPU memory the process holds, summed over
	// devices.
	ProcessMemoryBytes uint64
	// ProcessMemoryUnknown is set when the driver listed the process on a
	// device without a memory figure (NVML_VALUE_NOT_AVAILABLE); that
	// device then adds nothing to ProcessMemoryBytes.
	ProcessMemoryUnknown bool
	// DeviceMemoryBytes is the memory in use on the run's devices by every
	// process, summed.
	DeviceMemoryBytes uint64
	// UtilizationPercent is the mean, over the run's devices that report
	// it, of the percentage of the driver's last sample period (1/6 s to
	// 1 s depending on the product) during which a kernel ran on the
	// device, whichever process ran it.
	UtilizationPercent float64
	// RunDevices is how many devices the figures above cover.
	RunDevices int
	// Devices holds each device's figures, in Devices() order.
	Devices []DeviceSample
}

// DeviceSample is one device's part of a GPUSample.
type DeviceSample struct {
	MemoryUsedBytes    uint64 // by every process
	ProcessMemoryBytes uint64 // by the sampled process
	// ProcessPresent tells whether the sampled process holds a context on
	// the device.
	ProcessPresent     bool
	UtilizationPercent float64
}

// summarise fills the run-device totals of s from its per-device figures.
func (s *GPUSample) summarise(devs []Device) {
	present := false
	for _, d := range s.Devices {
		present = present || d.ProcessPresent
	}
	s.ProcessMemoryBytes, s.DeviceMemoryBytes, s.UtilizationPercent, s.RunDevices = 0, 0, 0, 0
	var utilSum float64
	utilN := 0
	for i, d := range s.Devices {
		s.ProcessMemoryBytes += d.ProcessMemoryBytes
		if present && !d.ProcessPresent {
			continue
		}
		s.RunDevices++
		s.DeviceMemoryBytes += d.MemoryUsedBytes
		if devs[i].HasUtilization {
			utilSum += d.UtilizationPercent
			utilN++
		}
	}
	if utilN > 0 {
		s.UtilizationPercent = utilSum / float64(utilN)
	}
}

// Describe opens NVML and writes what it sees: the driver, each device with
// its memory, utilisation and processes, one sample of the calling process
// and what a Sample costs. It is the check to run on a GPU host before
// trusting the GPU columns of a run; without NVML it returns the
// ErrUnavailable error.
func Describe(w io.Writer) error {
	n, err := Open()
	if err != nil {
		return err
	}
	defer n.Close()
	fmt.Fprintf(w, "NVML: driver %s\n", n.DriverVersion())
	pid := os.Getpid()
	var s GPUSample
	if err := n.Sample(pid, &s); err != nil {
		return err
	}
	for i, d := range n.Devices() {
		ds := s.Devices[i]
		util := "not reported"
		if d.HasUtilization {
			util = fmt.Sprintf("%.0f%%", ds.UtilizationPercent)
		}
		fmt.Fprintf(w, "GPU %d: %s %s, %s, %s in use, utilisation %s\n",
			d.Index, d.Name, d.UUID, sizeString(d.MemoryBytes), sizeString(ds.MemoryUsedBytes), util)
		if !d.HasProcesses {
			fmt.Fprintf(w, "  processes: not reported by this device\n")
			continue
		}
		procs, err := n.processes(i)
		if err != nil {
			return err
		}
		if len(procs) == 0 {
			fmt.Fprintf(w, "  processes: none\n")
		}
		for _, p := range procs {
			mem := sizeString(p.memoryBytes)
			if p.memoryUnknown {
				mem = "memory not reported"
			}
			fmt.Fprintf(w, "  pid %d (%s): %s\n", p.pid, p.kind, mem)
		}
	}
	fmt.Fprintf(w, "this process (pid %d): %s on GPUs; run's devices: %d, %s in use, utilisation %.0f%%\n",
		pid, sizeString(s.ProcessMemoryBytes), s.RunDevices, sizeString(s.DeviceMemoryBytes), s.UtilizationPercent)
	fmt.Fprintf(w, "  (NVML reports host pids: in a container with its own PID namespace, the process is not found and the run's devices are all devices)\n")

	const rounds = 200
	start := time.Now()
	for range rounds {
		if err := n.Sample(pid, &s); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "one Sample: %v (mean of %d, %d devices)\n", time.Since(start)/rounds, rounds, len(n.Devices()))
	return nil
}

func sizeString(b uint64) string { return units.FormatBytes(int64(b)) }

// process is one entry of a device's process lists, for Describe.
type process struct {
	pid           uint32
	kind          string // compute, graphics
	memoryBytes   uint64
	memoryUnknown bool
}

// DescribeOrWhy is Describe for the detect command: without NVML it says
// why, and that GPU figures are then recorded as absent, instead of
// returning ErrUnavailable.
func DescribeOrWhy(w io.Writer) error {
	err := Describe(w)
	if !errors.Is(err, ErrUnavailable) {
		return err
	}
	// The error reads "NVML unavailable: why"; the line names NVML once.
	why := strings.TrimPrefix(err.Error(), ErrUnavailable.Error()+": ")
	fmt.Fprintf(w, "NVML: not available: %s\n(GPU figures are recorded as absent, not zero)\n", why)
	return nil
}
