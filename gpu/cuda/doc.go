// Package cuda is the GPU prover backend: the Groth16 prover of gpu/cpu
// (same math, same stage names, byte-identical proofs for the same blinding)
// running on NVIDIA GPUs through ICICLE (github.com/ingonyama-zk/icicle-gnark).
//
// The package builds only with the build tag "cuda" and cgo, against
// ICICLE's C++ front end (libicicle_device, libicicle_field_bls12_381,
// libicicle_curve_bls12_381); at run time ICICLE loads its CUDA backend
// libraries from Options.BackendDir or $ICICLE_BACKEND_INSTALL_DIR.
// mk/cuda.mk builds both; docs/gpu.md says how to run on a GPU host. Without
// the tag the package is empty and nothing in the default build needs CUDA.
//
// How a partition runs on a device:
//
//   - Load uploads the proving key (A, B1, L, H in G1, B2 in G2) to every
//     device once and keeps it resident, converted out of Montgomery form so
//     no MSM converts bases again. It also initialises ICICLE's NTT domain.
//   - Start waits for room in the device's queue (Options.QueueDepth),
//     copies a, b, c to the device and hands the partition to the device;
//     the NTT region can start there while Start copies the wires. Start
//     returns when both copies are done: the job never reads the dataset
//     again, and the pipeline may free a/b/c (the "early a/b/c free").
//   - Each device has a launch thread that issues a partition's NTT region
//     and its five MSMs on the device's compute stream, in submission order,
//     freeing each device buffer right after its last use, and a completion
//     thread that waits for each partition's last event and releases what
//     it held. So a GPU worker uploads the next partition while the MSMs of
//     the previous one run, and Job.Wait only waits and assembles.
//   - Device times come from CUDA events (the driver library, libcuda.so.1,
//     is opened at run time: nothing links against CUDA); on ICICLE's CPU
//     device, which completes every call before returning, from the host
//     clock.
//
// Scalars stay in gnark-crypto's Montgomery representation on the device:
// the NTTs are linear, and the MSMs treat the representation x*R as an
// integer, so every sum comes out multiplied by a known constant, removed
// with one scalar multiplication when the sums are read back. The quotient is evaluated on the
// coset w2N*<wN> (w2N a 2N-th root of unity) instead of gnark-crypto's
// g*<wN>: ICICLE computes that coset from its twiddles, where an arbitrary g
// would cost N host multiplications per NTT; the quotient's coefficients, and
// so the proof, do not depend on the coset.
//
// ICICLE keeps one NTT domain per device per process, which Load
// initialises and Close releases: a process should hold one loaded Backend
// per device at a time (provebench runs each repetition in its own process).
package cuda
