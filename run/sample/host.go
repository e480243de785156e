package sample

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/provebench/provebench/results"
)

// Host describes the machine a run measures: it fills the host fields of
// results.Environment (Hostname, OS, Arch, Kernel, CPUModel, CPUs,
// MemoryBytes) and leaves the rest (Go version, GOMAXPROCS, git commit,
// NVML) to the caller, which knows them. It reads /proc and uname once; call
// it once per run, not per sample.
//
// OS and Arch are Go's names (GOOS, GOARCH), as Go benchmark output writes
// them. CPUs counts logical CPUs of the host, not the ones this process may
// use. MemoryBytes is the host's MemTotal: a cgroup limit below it is not
// reflected, and on hosts whose memory is ballooned in as it is used
// (some microVMs) it can read low early in the run.
func Host(ctx context.Context) (results.Environment, error) {
	env := results.Environment{OS: runtime.GOOS, Arch: runtime.GOARCH}
	var err error
	if env.Hostname, err = os.Hostname(); err != nil {
		return env, fmt.Errorf("host: hostname: %w", err)
	}
	if env.Kernel, err = host.KernelVersionWithContext(ctx); err != nil {
		return env, fmt.Errorf("host: kernel version: %w", err)
	}
	if env.CPUs, err = cpu.CountsWithContext(ctx, true); err != nil {
		return env, fmt.Errorf("host: CPU count: %w", err)
	}
	infos, err := cpu.InfoWithContext(ctx)
	if err != nil {
		return env, fmt.Errorf("host: CPU model: %w", err)
	}
	// Mixed-model hosts are rare outside big.LITTLE; the first CPU names
	// the part that does the proving on servers.
	if len(infos) > 0 {
		env.CPUModel = strings.TrimSpace(infos[0].ModelName)
	}
	vm, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return env, fmt.Errorf("host: memory: %w", err)
	}
	env.MemoryBytes = vm.Total
	return env, nil
}
