package spec

import "time"

// ExecSpec describes an external prover that a repetition runs instead of
// the built-in pipeline (the exec driver). Every string of Command, Env,
// Dir, Files and Daemon.Command is a Go text/template filled from the
// configuration (see ExecData) when the repetition starts.
type ExecSpec struct {
	// Command is the argv of the measured command; the repetition is its
	// run, from start to exit.
	Command []string `json:"command"`
	// Env adds variables to provebench's own environment.
	Env map[string]string `json:"env,omitempty"`
	// Dir is the working directory; empty means provebench's own.
	Dir string `json:"dir,omitempty"`
	// Files are written before each repetition (a daemon's configuration,
	// per configuration). Relative paths are under ExecData.Dir.
	Files []ExecFile `json:"files,omitempty"`
	// Setup commands run once per configuration, before its warm-ups,
	// outside every measurement (keys, parameters, a trusted setup).
	Setup [][]string `json:"setup,omitempty"`
	// Daemon, if set, is started before and stopped after each
	// repetition, inside the sampled process tree.
	Daemon *DaemonSpec `json:"daemon,omitempty"`
	// StopGrace is how long processes get between SIGTERM and SIGKILL
	// when the repetition ends or is stopped.
	StopGrace time.Duration `json:"stop_grace"`

	// Partitions and Proofs are the units one repetition proves, for
	// throughput from the command's wall time when its events do not
	// count them (0: unknown).
	Partitions int `json:"partitions,omitempty"`
	Proofs     int `json:"proofs,omitempty"`

	// Timeline reads cuzk's TIMELINE lines from stdout and stderr.
	Timeline bool `json:"timeline,omitempty"`
	// Rules turn other output lines into counters and stages.
	Rules []RuleSpec `json:"rules,omitempty"`
	// Status polls a JSON status page; Prometheus a metrics page.
	Status     *StatusSpec     `json:"status,omitempty"`
	Prometheus *PrometheusSpec `json:"prometheus,omitempty"`
}

// ExecFile is one file rendered before a repetition.
type ExecFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// DaemonSpec is a long-running process a repetition's command talks to.
type DaemonSpec struct {
	Command []string `json:"command"`
	// ReadyURL, if set, is polled until it answers (any HTTP status)
	// before the command starts; ReadyDelay is waited otherwise.
	ReadyURL     string        `json:"ready_url,omitempty"`
	ReadyTimeout time.Duration `json:"ready_timeout,omitempty"`
	ReadyDelay   time.Duration `json:"ready_delay,omitempty"`
}

// RuleSpec is a regular-expression rule over output lines (see
// events.Rule).
type RuleSpec struct {
	Match   string  `json:"match"`
	Action  string  `json:"action"`
	Counter string  `json:"counter,omitempty"`
	Stage   string  `json:"stage,omitempty"`
	Scale   float64 `json:"scale,omitempty"`
}

// StatusSpec polls a JSON status page: JSON pointer -> counter.
type StatusSpec struct {
	URL      string            `json:"url"`
	Interval time.Duration     `json:"interval"`
	Counters map[string]string `json:"counters"`
}

// PrometheusSpec polls a Prometheus text page: metric family -> counter.
type PrometheusSpec struct {
	URL      string            `json:"url"`
	Interval time.Duration     `json:"interval"`
	Counters map[string]string `json:"counters"`
}
