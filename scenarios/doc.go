// Package scenarios reads provebench's scenario files: YAML documents that
// describe pipeline configurations to benchmark. Load turns them into
// fully resolved run.Spec values, one per configuration; Schema describes
// the format as JSON Schema for editors.
//
// # Format
//
//	version: 1              # required
//	defaults:               # optional: settings for every scenario of the file
//	  backend: cpu
//	  workload: {constraints: 2^14, partitions: 4}
//	  pipeline: {strategy: release, channel_capacity: 1}
//	scenarios:              # explicit scenarios: a name and settings
//	  - name: hold-c1
//	    description: permit held until the channel accepts
//	    pipeline: {strategy: hold}
//	matrix:                 # cartesian sweeps
//	  - name: sweep
//	    base: {workload: {proofs: 4}}        # optional settings for every point
//	    axes:                                # field path -> values
//	      pipeline.strategy: [release, hold]
//	      pipeline.channel_capacity: [1, 4]
//	  - name: ranges
//	    axes:                                # or a range of numbers, sizes, durations
//	      pipeline.partition_workers: {from: 4, to: 18, step: 2}
//	      pipeline.channel_capacity: {from: 1, to: 16, times: 2}
//
// Every setting is optional. A scenario's value of a field is, from the
// strongest: its own (or a matrix point's axis value), the matrix's base,
// the file's defaults, the built-in default. Merging is field by field, so
// a scenario that sets pipeline.strategy keeps the other pipeline fields of
// the defaults. The fields, their built-in defaults and limits are listed
// by Schema (provebench schema).
//
// An axis is a list of values or a range: {from, to, step} lists from,
// from+step, ... up to to; {from, to, times} lists from, from*times, ... up
// to to. Ranges sweep integers, sizes ({from: 96GiB, to: 320GiB, step:
// 32GiB}), numbers, durations and constraints (by times only, which keeps
// them powers of two); each value is written as the loader reads it
// (128GiB, 2^22, 1.5s) in the points' names and labels. A range runs
// upwards, takes step (greater than 0) or times (greater than 1, whole for
// integer fields), and expands to at most 1000 values, as a list holds at
// most 1000; a matrix has at most 10000 points. One load (every file of a
// run together) defines at most 10000 configurations, scenarios and matrix
// points counted together, before any is built: YAML aliases can name one
// axes block from many matrices.
//
// A matrix point is named after its matrix and its axis values, in axis
// order, as Go benchmark tools read sub-benchmark keys:
// sweep/strategy=release/channel_capacity=1. An axis is keyed by the last
// segment of its path unless another axis of the matrix ends the same way,
// then by as many trailing segments as tell them apart. Its Labels map
// field paths to the values as written. Explicit names are letters, digits
// and . _ + -.
//
// Names are scoped by file: they must be unique within a file, and several
// files load together. A name that more than one file of a load defines is
// qualified by its file's base name, FILE:NAME (quickstart:release,
// ci:release; by the path if two files share a base name); the others stay
// as written. run.Spec.File records the scope.
//
// # Values
//
// Sizes (memory_limit, pipeline.budget) are bytes: an integer, 2^k, or a
// number and a unit with no space between: binary KiB, MiB, GiB, TiB, PiB
// (powers of 1024) or decimal kB, MB, GB, TB, PB (powers of 1000), as in
// 512MiB, 16GiB, 1.5GB. A fraction must come to whole bytes. The ambiguous
// forms K, G, KB, Gi are refused with a hint rather than guessed.
// workload.constraints is a power of two written as 2^k or an integer.
// Durations use Go's time.ParseDuration forms (500ms, 10s, 1m30s). Booleans
// are true or false (not yes/no). Integers, numbers and booleans are written
// without quotes: "2" and "false" are strings, refused as the JSON Schema
// refuses them. YAML anchors, aliases and merge keys (<<) work as YAML
// defines them.
//
// # Rules
//
// Unknown fields are errors, with the nearest valid name suggested; a field
// written in the wrong section says where it belongs (strategy belongs
// under pipeline). A matrix needs at least one axis. Beyond
// each field's own type and limits, every resolved configuration must pass
// the pipeline's validation (config.Workload.Validate and
// Config.Validate) and these rules:
//   - pipeline.strategy is one gate or gates joined by + in the order
//     permits (release or hold), budget, pacer (budget+pacer,
//     hold+budget+pacer); each gate's rules below apply to a composition
//     that has it;
//   - release and hold need partition_workers >= 1;
//   - budget needs pipeline.budget to hold one partition's dataset (a/b/c
//     and wires: 128 bytes per constraint, less 32);
//   - pacer needs kp or ki above 0;
//   - a non-zero memory_limit must hold one partition's dataset;
//   - sample_interval must not be longer than timeout;
//   - key setup is refused above 2^20 constraints, where a real setup takes
//     hours (auto picks setup up to 2^16 and random above).
//
// The simulate block (stage costs and the host, see docs/simulate.md) is
// read by provebench simulate only; run ignores it.
//
// Two values are resolved by the loader, so that results record what ran:
// key auto becomes setup or random for the scenario's size, and verify is
// turned off for random keys, whose proofs cannot verify (verify applies
// to setup keys only; asking for it with a random key is not an error).
// backend auto stays auto: it depends on the host that runs it.
//
// # Errors
//
// Load reports every problem it finds, not just the first, as Errors: one
// line per problem, file:line:col: path: message, the path naming the
// field as it sits in the document (scenarios[2].pipeline.channel_capacity,
// matrix[0].axes[pipeline.strategy][1]). A problem with one value points
// at that value, naming the scenarios it affects when the value is shared
// (a default, a matrix base); a problem with a built-in default points at
// the scenario. The same value is reported once however many scenarios
// share it.
package scenarios
