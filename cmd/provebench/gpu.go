package main

import (
	"github.com/spf13/cobra"

	"github.com/provebench/provebench/gpu/backends"
	"github.com/provebench/provebench/gpu/nvml"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
)

// nvmlSampler adapts NVML to the runner's GPUSampler.
type nvmlSampler struct {
	n *nvml.NVML
	s nvml.GPUSample
	// hidden: NVML cannot see our children's pids (a PID namespace).
	hidden bool
}

func (a *nvmlSampler) Sample(pid int) (run.GPUReading, error) {
	if err := a.n.Sample(pid, &a.s); err != nil {
		return run.GPUReading{}, err
	}
	return run.GPUReading{
		ProcessBytes: a.s.ProcessMemory(a.hidden),
		DeviceBytes:  a.s.DeviceMemoryBytes,
		Utilization:  a.s.UtilizationPercent / 100,
	}, nil
}

// attachGPU gives the runner NVML sampling when NVML answers, and records
// the GPUs in the environment; without NVML, GPU figures stay absent.
func attachGPU(r *run.Runner) (closeFn func()) {
	n, err := nvml.Open()
	if err != nil {
		return func() {}
	}
	r.GPU = &nvmlSampler{n: n, hidden: nvml.ProcessesHidden()}
	r.Env.NVML = true
	r.Env.DriverVersion = n.DriverVersion()
	for _, d := range n.Devices() {
		r.Env.GPUs = append(r.Env.GPUs, results.GPU{Index: d.Index, Name: d.Name, UUID: d.UUID, MemoryBytes: d.MemoryBytes})
	}
	return func() { n.Close() }
}

func newDetectCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "detect",
		Short: "Show the GPUs, NVML and backends this host and binary offer",
		Long: `detect prints what provebench can use here: the backends this binary was built
with, and through NVML the driver, each GPU, the processes using them and the
cost of one sample. Without NVML it says why (GPU figures are then recorded as
absent in results).`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			backends.PrintBuilt(w)
			return nvml.DescribeOrWhy(w)
		},
	}
}
