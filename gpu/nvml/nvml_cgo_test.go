//go:build linux && cgo

package nvml

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/dl"
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// TestOpenWithoutLibrary: where the dynamic loader cannot find NVML, Open
// must report ErrUnavailable (and not crash, as a call into the unloaded
// library would).
func TestOpenWithoutLibrary(t *testing.T) {
	lib := dl.New("libnvidia-ml.so.1", dl.RTLD_LAZY|dl.RTLD_LOCAL)
	if err := lib.Open(); err == nil {
		lib.Close()
		t.Skip("libnvidia-ml.so.1 is installed here")
	}
	for range 2 { // a failed Open leaves nothing behind that breaks the next
		n, err := Open()
		if err == nil {
			n.Close()
			t.Fatal("Open succeeded without libnvidia-ml.so.1")
		}
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "libnvidia-ml.so.1") {
			t.Fatalf("Open: %v, want ErrUnavailable naming the library", err)
		}
	}
}

func TestProcessMemory(t *testing.T) {
	list := []gonvml.ProcessInfo{
		{Pid: 10, UsedGpuMemory: 100},
		{Pid: 11, UsedGpuMemory: 1000},
		{Pid: 10, UsedGpuMemory: 50, GpuInstanceId: 1}, // a second instance
		{Pid: 12, UsedGpuMemory: notAvailable},
	}
	for _, tc := range []struct {
		pid              int
		bytes            uint64
		present, unknown bool
	}{
		{10, 150, true, false},
		{11, 1000, true, false},
		{12, 0, true, true},
		{13, 0, false, false},
	} {
		b, p, u := processMemory(list, tc.pid)
		if b != tc.bytes || p != tc.present || u != tc.unknown {
			t.Errorf("pid %d: got %d, %v, %v; want %d, %v, %v", tc.pid, b, p, u, tc.bytes, tc.present, tc.unknown)
		}
	}
}

// openGPU opens NVML or skips the test on hosts without it.
func openGPU(t testing.TB) *NVML {
	t.Helper()
	n, err := Open()
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func TestGPUDevices(t *testing.T) {
	n := openGPU(t)
	if n.DriverVersion() == "" {
		t.Error("no driver version")
	}
	devs := n.Devices()
	if len(devs) == 0 {
		t.Fatal("Open succeeded with no devices")
	}
	for i, d := range devs {
		if d.Index != i || d.Name == "" || d.MemoryBytes == 0 ||
			!(strings.HasPrefix(d.UUID, "GPU-") || strings.HasPrefix(d.UUID, "MIG-")) {
			t.Errorf("device %d: %+v", i, d)
		}
	}

	// The test process has no CUDA context.
	var s GPUSample
	if err := n.Sample(os.Getpid(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Devices) != len(devs) || s.RunDevices != len(devs) {
		t.Fatalf("sample covers %d devices (%d run devices), want %d", len(s.Devices), s.RunDevices, len(devs))
	}
	var total uint64
	for i, ds := range s.Devices {
		if ds.ProcessPresent || ds.ProcessMemoryBytes != 0 {
			t.Errorf("device %d: the test process holds no context, got %+v", i, ds)
		}
		if ds.MemoryUsedBytes > devs[i].MemoryBytes || ds.UtilizationPercent < 0 || ds.UtilizationPercent > 100 {
			t.Errorf("device %d: implausible %+v (total %d)", i, ds, devs[i].MemoryBytes)
		}
		total += ds.MemoryUsedBytes
	}
	if s.DeviceMemoryBytes != total {
		t.Errorf("DeviceMemoryBytes %d, devices sum to %d", s.DeviceMemoryBytes, total)
	}

	var sb strings.Builder
	if err := Describe(&sb); err != nil {
		t.Fatal(err)
	}
	t.Logf("Describe:\n%s", sb.String())
	if !strings.Contains(sb.String(), "GPU 0: "+devs[0].Name) {
		t.Errorf("Describe does not list GPU 0")
	}

	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := n.Sample(os.Getpid(), &s); err == nil {
		t.Error("Sample after Close succeeded")
	}
}

// gpuHolder holds 1 GiB of GPU memory and keeps the GPU busy with matrix
// products until its standard input closes.
const gpuHolder = `
import select, sys, torch
x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
x.fill_(1)
a = torch.randn(4096, 4096, device="cuda")
torch.cuda.synchronize()
print("ready", flush=True)
while not select.select([sys.stdin], [], [], 0)[0]:
    for _ in range(20):
        a = a @ a
        a = a / a.norm()
    torch.cuda.synchronize()
`

// TestGPUProcess samples a process that holds GPU memory and runs kernels.
// It needs a GPU and python3 with a CUDA build of PyTorch, and skips
// without them.
func TestGPUProcess(t *testing.T) {
	n := openGPU(t)
	if err := exec.Command("python3", "-c", "import torch; assert torch.cuda.is_available()").Run(); err != nil {
		t.Skipf("no python3 with CUDA PyTorch to hold GPU memory: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-c", gpuHolder)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("GPU holder: %q, %v", line, err)
	}
	go io.Copy(io.Discard, stdout)

	pid := cmd.Process.Pid
	var sb strings.Builder
	if err := Describe(&sb); err != nil {
		t.Fatal(err)
	}
	t.Logf("holder pid %d; Describe:\n%s", pid, sb.String())
	var s GPUSample
	if err := n.Sample(pid, &s); err != nil {
		t.Fatal(err)
	}
	t.Logf("holder pid %d: %+v", pid, s)
	present := 0
	for _, ds := range s.Devices {
		if ds.ProcessPresent {
			present++
		}
	}
	if present == 0 {
		t.Fatalf("NVML does not list pid %d on any device (PID namespace?)", pid)
	}
	if s.RunDevices != present {
		t.Errorf("RunDevices %d, process present on %d", s.RunDevices, present)
	}
	const held = 1 << 30
	if !s.ProcessMemoryUnknown && s.ProcessMemoryBytes < held {
		t.Errorf("process memory %d MiB, the holder allocated %d MiB", s.ProcessMemoryBytes>>20, held>>20)
	}
	if s.DeviceMemoryBytes < s.ProcessMemoryBytes {
		t.Errorf("device memory %d below the process's %d", s.DeviceMemoryBytes, s.ProcessMemoryBytes)
	}

	// The holder runs kernels back to back: the driver's utilisation
	// window (at most 1 s) must see them.
	var util float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && util == 0; time.Sleep(100 * time.Millisecond) {
		if err := n.Sample(pid, &s); err != nil {
			t.Fatal(err)
		}
		util = s.UtilizationPercent
	}
	hasUtil := false
	for _, d := range n.Devices() {
		hasUtil = hasUtil || d.HasUtilization
	}
	if hasUtil && !(util > 0) { // NaN fails too
		t.Errorf("utilisation stayed 0 while the holder ran kernels")
	}
	t.Logf("utilisation %.0f%%", util)
}

// BenchmarkGPUSample is what one NVML sample costs on this host (10 ms
// sampling leaves 100 µs for 1% of a core).
func BenchmarkGPUSample(b *testing.B) {
	n := openGPU(b)
	var s GPUSample
	pid := os.Getpid()
	b.ReportAllocs()
	for b.Loop() {
		if err := n.Sample(pid, &s); err != nil {
			b.Fatal(err)
		}
	}
}
