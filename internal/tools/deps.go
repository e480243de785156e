//go:build tools

// Package tools pins the project's chosen dependencies while packages that
// use them are being written. TEMPORARY: removed once every import is real.
package tools

import (
	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/core"
	_ "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381"
	_ "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"
	_ "github.com/shirou/gopsutil/v4/process"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/perf/benchfmt"
	_ "golang.org/x/perf/benchmath"
	_ "golang.org/x/sync/semaphore"
	_ "gonum.org/v1/plot"
	_ "gonum.org/v1/plot/vg/draw"
	_ "gopkg.in/yaml.v3"
)
