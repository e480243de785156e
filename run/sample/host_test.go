package sample

import (
	"context"
	"os"
	"runtime"
	"testing"
)

func TestHost(t *testing.T) {
	env, err := Host(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hostname, _ := os.Hostname()
	if env.Hostname != hostname || env.OS != runtime.GOOS || env.Arch != runtime.GOARCH {
		t.Errorf("hostname/os/arch = %q/%q/%q, want %q/%q/%q", env.Hostname, env.OS, env.Arch, hostname, runtime.GOOS, runtime.GOARCH)
	}
	if env.Kernel == "" {
		t.Error("no kernel release")
	}
	if env.CPUs < runtime.NumCPU() {
		t.Errorf("CPUs = %d, below the %d this process may use", env.CPUs, runtime.NumCPU())
	}
	if env.MemoryBytes < 64<<20 {
		t.Errorf("MemoryBytes = %d", env.MemoryBytes)
	}
	// x86 /proc/cpuinfo always names the model; other architectures may not.
	if runtime.GOARCH == "amd64" && env.CPUModel == "" {
		t.Error("no CPU model")
	}
	// The rest belongs to the caller.
	if env.GoVersion != "" || env.GOMAXPROCS != 0 || env.NVML || env.GPUs != nil {
		t.Errorf("Host filled fields it does not own: %+v", env)
	}
}
