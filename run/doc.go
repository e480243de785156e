// Package run runs scenarios: each repetition of a configuration in its own
// child process, sampled on one time axis, and records the results.
package run
