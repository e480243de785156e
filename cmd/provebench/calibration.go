package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/gpu/groth16"
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
				predict.PrintCachePath(cmd.OutOrStdout(), calibcache.Dir(cacheDir))
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
	return predict.PrintCalibrationCache(ctx, w, cache, run.HostEnvironment(ctx), run.BoundBasis, explain)
}
