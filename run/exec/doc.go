// Package exec is the exec driver: it runs an external prover's command as
// a repetition, under a supervisor of its own (`provebench exec-shim`,
// ShimMain) that reaps and ends the command's whole process tree, samples
// that tree on the supervising loop (run/supervise), reads counters and
// stage times from the command's output lines and endpoints (run/events),
// and records the repetition as the built-in pipeline's is recorded: one
// results.Repetition. The runner (run) picks it for a configuration with
// an exec section and keeps the sweep, the order and the document.
package exec
