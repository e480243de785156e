package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/run"
)

func newEngineCmd() *cobra.Command {
	var name, cacheDir string
	var timeline, prepare bool
	c := &cobra.Command{
		Use:   "engine FILE --scenario NAME",
		Short: "Run one configuration's pipeline in this process, as a prover daemon would",
		Long: `engine runs one configuration of a scenario file through the pipeline in this
process, once, without sampling or child processes: provebench as an external
prover, for the exec driver to measure like any other (see the README's
"Benchmarking your own prover"). With --timeline it prints cuzk-format
TIMELINE lines on stderr (TIMELINE,<offset_ms>,<event>,<proof>,<partition>).
It prints a JSON summary on stdout when the run ends. --prepare only makes
sure the proving key is in the cache (for an exec scenario's setup, so key
generation is never measured).`,
		Example: `  provebench engine scenarios/ci.yaml --scenario hold --timeline`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			specs, err := loadSpecs(args)
			if err != nil {
				return usageError{err}
			}
			var spec *run.Spec
			var names []string
			for i := range specs {
				names = append(names, specs[i].Name)
				if specs[i].Name == name {
					spec = &specs[i]
				}
			}
			switch {
			case spec == nil:
				return usagef("engine: no configuration %q in %s (have %s)", name, args[0], strings.Join(names, ", "))
			case spec.IsExec():
				return usagef("engine: %s is an exec configuration, not one of the built-in pipeline", name)
			}
			if prepare {
				pk, _, err := groth16.Cache{Dir: cacheDir}.Get(cmd.Context(), spec.Workload.Circuit(), spec.Key)
				if err != nil {
					return err
				}
				return pk.Close()
			}
			var tw io.Writer
			if timeline {
				tw = os.Stderr
			}
			rep, err := run.RunEngine(cmd.Context(), spec, cacheDir, tw)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", " ")
			if err := enc.Encode(rep); err != nil {
				return err
			}
			if rep.PartitionsFailed > 0 {
				return exitError{exitFailure, fmt.Errorf("engine: %d partitions failed", rep.PartitionsFailed)}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVarP(&name, "scenario", "s", "", "the configuration to run (its name in FILE)")
	fl.BoolVar(&timeline, "timeline", false, "print cuzk-format TIMELINE lines on stderr")
	fl.BoolVar(&prepare, "prepare", false, "only make sure the proving key is in the cache")
	fl.StringVar(&cacheDir, "cache", groth16.DefaultCacheDir(), "proving key cache directory")
	_ = c.MarkFlagRequired("scenario")
	return c
}
