// Package supervise is the one loop that watches a repetition while it
// runs, for every driver: the built-in pipeline in a child process and an
// external command under the exec supervisor.
//
// At every tick of the sampling interval the loop asks the driver's Target
// for one sample, stamped with the moment it is read (not the tick's due
// time: under load the two drift apart and rows come out of order), and
// checks the RSS it returns against the scenario's memory limit. It stops
// the target at the scenario's timeout, at the memory limit and when the
// run is interrupted, each through the target's own Stop (a SIGINT with a
// grace period for the child, a SIGTERM to the supervisor, which ends the
// tree), and kills it when that grace has passed. It reports progress a few
// times a second.
//
// After the target has exited, Verdict holds the kernel's final peak to
// the same limit: a repetition whose memory passed the limit between two
// samples (or before the first) is a memory-limit repetition too, whichever
// driver ran it.
package supervise
