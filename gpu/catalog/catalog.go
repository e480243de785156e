// Package catalog says which prover backends there are and what each runs
// on, without linking one: the scenario schema, flags and their help, and
// the readers that judge or place a figure (compare, compare/ab, the
// runner's energy meter) ask here, so that none of them links a prover to
// learn a name. gpu/backends opens them.
package catalog

// The backend names gpu/backends.Open accepts.
const (
	CPU  = "cpu"
	CUDA = "cuda"
	// Automatic is CUDA where the binary has it and a GPU answers, else
	// CPU.
	Automatic = "auto"
)

// OnHost reports whether the backend of that name proves on the host's
// CPUs: its "device" time is the host's CPU time and its "device" memory
// host memory, so neighbours on the host slow it and its memory counts
// against the host's. Readers that judge or place a figure ask here, not
// by the name.
func OnHost(name string) bool { return name == CPU }

// OnGPU reports whether the backend of that name proves on GPUs (NVML's
// figures, energy and GPU-seconds apply).
func OnGPU(name string) bool { return name == CUDA }

// Names lists the backend names, in the order help texts give them.
func Names() []string { return []string{CPU, CUDA, Automatic} }

// Doc says what each name runs, for help texts and the scenario schema:
// "cpu (gnark-crypto, runs anywhere), cuda (...), or auto (...)".
func Doc() string {
	return CPU + " (gnark-crypto, runs anywhere), " + CUDA + " (ICICLE on an NVIDIA GPU), or " +
		Automatic + " (" + CUDA + " where a GPU and the CUDA build are present, else " + CPU + ")"
}
