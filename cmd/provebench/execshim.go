package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/run/exec"
)

// newExecShimCmd is the exec driver's supervisor, one per repetition.
func newExecShimCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "exec-shim",
		Short:  "Supervise one exec repetition's process tree (internal: started by run)",
		Hidden: true,
		Args:   exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			stream := os.NewFile(3, "stream")
			if stream == nil {
				return usagef("exec-shim: no stream on file descriptor 3 (this command is started by `provebench run`)")
			}
			return exec.ShimMain(cmd.Context(), os.Stdin, stream)
		},
	}
}
