package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/predict/calibcache"
	"github.com/provebench/provebench/run"
)

func newCalibrationCmd() *cobra.Command {
	var cacheDir string
	var explain, path bool
	c := &cobra.Command{
		Use:   "calibration",
		Short: "Show the cached runs that run's pre-flight check fits its model to",
		Long: `calibration shows the calibration cache: the results of this host's recent
runs, per backend, that run's pre-flight check fits the simulator to when it
is not given --calibration (the newest 8 per host and backend, and the newest of
up to 8 other sets of configurations; every run adds
its own unless --no-calibration-cache). For each backend it says what the
pre-flight check will do: predict from the cached runs, or fall back to each
strategy's bound and why. The cache is a folder beside the proving keys;
delete it (rm -rf) to start afresh.`,
		Example: `  provebench calibration
  provebench calibration --explain     # the fitted model of each backend
  rm -rf "$(provebench calibration --path)"`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if path {
				fmt.Fprintln(cmd.OutOrStdout(), calibcache.Dir(cacheDir))
				return nil
			}
			return runCalibration(cmd.Context(), cmd.OutOrStdout(), cacheDir, explain)
		},
	}
	fl := c.Flags()
	fl.StringVar(&cacheDir, "cache", groth16.DefaultCacheDir(), "proving key cache directory (the calibration cache is its calibration folder)")
	fl.BoolVar(&explain, "explain", false, "print the model fitted to each backend's cached runs and its error on them")
	fl.BoolVar(&path, "path", false, "print the calibration cache's folder and nothing else")
	return c
}

func runCalibration(ctx context.Context, w io.Writer, cacheDir string, explain bool) error {
	cache := calibcache.Cache{Dir: calibcache.Dir(cacheDir)}
	env := run.HostEnvironment(ctx)
	fmt.Fprintf(w, "calibration cache: %s\n", cache.Dir)
	fmt.Fprintf(w, "this host: %s (%s, %s, %s)\n", calibcache.HostKey(env), env.Hostname, env.CPUModel, units.FormatBytes(int64(min(env.MemoryBytes, 1<<62))))
	backends, err := cache.Backends(env)
	if err != nil {
		return err
	}
	if len(backends) == 0 {
		fmt.Fprintln(w, "no cached run of this host: pre-flight takes each strategy's bound")
	}
	for _, b := range backends {
		files, err := cache.Files(env, b)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s backend: %s\n", b, units.Plural(len(files), "cached run"))
		for _, f := range files {
			size := "?"
			if st, err := os.Stat(f); err == nil {
				size = units.FormatBytes(st.Size())
			}
			fmt.Fprintf(w, "  %s  %s\n", filepath.Base(f), size)
		}
		model, from, err := predict.CalibrateCached(ctx, cache, env, b)
		if why, ok := noPrediction(err); ok {
			fmt.Fprintf(w, "pre-flight: %s (%s)\n", run.BoundBasis, why)
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "pre-flight: %s\n", from)
		if explain {
			fmt.Fprintln(w)
			if err := model.Explain(w, int64(min(env.MemoryBytes, 1<<62))); err != nil {
				return err
			}
		}
	}
	return nil
}
