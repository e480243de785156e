package run

import (
	"context"
	"fmt"
	"time"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/gpu/prover"
	"github.com/provebench/provebench/pipeline"
	"github.com/provebench/provebench/pipeline/config"
	"github.com/provebench/provebench/results"
)

// preparedProver is a configuration's prover made ready to run: the key, the
// backend with the key on its devices, and the engine, with the time each
// step of getting there took.
type preparedProver struct {
	pk         *groth16.ProvingKey
	vk         *groth16.VerifyingKey
	be         prover.Backend
	whyNotCUDA string
	engine     *pipeline.Engine

	stages []prover.Stage // the setup steps, in order
	setup  time.Duration
}

// prepareProver loads spec's key, opens its backend and loads the key on
// it, and makes the engine with opts (Backend, Workload and Config are set
// here). For a warm start (the default) it also reserves page-locked
// memory for the datasets the strategy lets live at once (on backends that
// lock host memory) and proves one partition on every device, as a daemon
// that has served work before: the clock of the run then measures the
// prover, not its start-up. Every step is timed. On error everything made
// so far is released.
func prepareProver(ctx context.Context, spec *Spec, cacheDir string, opts pipeline.Options) (_ *preparedProver, err error) {
	p := &preparedProver{}
	start := time.Now()
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	step := func(name string, fn func() error) error {
		t := time.Now()
		err := fn()
		p.stages = append(p.stages, prover.Stage{Name: name, Duration: time.Since(t)})
		return err
	}
	err = step(results.SetupKeyRead, func() (err error) {
		p.pk, p.vk, err = groth16.Cache{Dir: cacheDir}.Get(ctx, spec.Workload.Circuit(), spec.Key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("proving key: %w", err)
	}
	err = step(results.SetupBackendOpen, func() (err error) { p.be, p.whyNotCUDA, err = openBackend(*spec); return err })
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	if err := step(results.SetupKeyToDevice, func() error { return p.be.Load(ctx, p.pk) }); err != nil {
		return nil, fmt.Errorf("load key on %s: %w", p.be.Name(), err)
	}
	opts.Backend, opts.Workload, opts.Config = p.be, spec.Workload, spec.Pipeline
	if p.engine, err = pipeline.New(opts); err != nil {
		return nil, err
	}
	if spec.Workload.Cached() {
		if err := step(results.SetupWitnessCache, func() error { return p.engine.Prepare(ctx) }); err != nil {
			return nil, err
		}
	}
	if !spec.Cold() {
		if r, ok := p.be.(prover.HostReserver); ok && locksHost(p.be) {
			abc, wires := config.DatasetBytes(spec.Workload)
			n := int(reservedDatasets(spec))
			err := step(results.SetupPinPool, func() error { return r.ReserveHost(n, abc/3, abc/3, abc/3, wires) })
			if err != nil {
				return nil, fmt.Errorf("reserve page-locked memory for %d datasets: %w", n, err)
			}
		}
		if err := step(results.SetupWarmPartition, func() error { return p.engine.WarmUp(ctx) }); err != nil {
			return nil, err
		}
	}
	if sr, ok := p.be.(prover.SetupReporter); ok {
		for _, st := range sr.SetupStages() {
			p.stages = append(p.stages, prover.Stage{Name: p.be.Name() + "." + st.Name, Duration: st.Duration})
		}
	}
	p.setup = time.Since(start)
	return p, nil
}

// reservedDatasets is how many datasets a warm start reserves page-locked
// memory for (config.WarmPoolDatasets, which the simulator sizes its
// pool with too).
func reservedDatasets(spec *Spec) int64 {
	return config.WarmPoolDatasets(spec.Workload, spec.Pipeline.Resolved(), spec.Devices)
}

// setupSeconds is the setup's stages in seconds, for the results.
func (p *preparedProver) setupSeconds() map[string]float64 {
	m := make(map[string]float64, len(p.stages))
	for _, st := range p.stages {
		m[st.Name] += st.Duration.Seconds()
	}
	return m
}

// Close releases the engine, the backend and the key.
func (p *preparedProver) Close() {
	if p.engine != nil {
		p.engine.Close()
	}
	if p.be != nil {
		_ = p.be.Close()
	}
	if p.pk != nil {
		_ = p.pk.Close()
	}
}

// locksHost reports whether a backend locks dataset memory (a HostPinner
// that returns a Pinner): only then is there anything to reserve.
func locksHost(be prover.Backend) bool {
	hp, ok := be.(prover.HostPinner)
	return ok && hp.HostPinner() != nil
}
