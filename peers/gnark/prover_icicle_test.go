//go:build icicle

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestICICLEProofsVerify proves through gnark's ICICLE prover on ICICLE's
// CPU device (or $PEER_GNARK_ICICLE_DEVICE) and checks the proofs with
// gnark's verifier. Opt in with PEER_GNARK_ICICLE_TEST=1 (make
// test-peer-icicle): it needs ICICLE's front end on the library path.
func TestICICLEProofsVerify(t *testing.T) {
	if os.Getenv("PEER_GNARK_ICICLE_TEST") != "1" {
		t.Skip("set PEER_GNARK_ICICLE_TEST=1 (make test-peer-icicle)")
	}
	device := os.Getenv("PEER_GNARK_ICICLE_DEVICE")
	if device == "" {
		device = "CPU"
	}
	// ICICLE's CPU device gives the task pools of its vector operations
	// hardware_concurrency()-2 workers where the caller sets no thread
	// count (gnark sets none), and asserts a pool has at least one: below
	// three hardware threads the process aborts.
	if n, err := onlineCPUs(); device == "CPU" && err == nil && n < 3 {
		t.Skipf("ICICLE's CPU device aborts below three hardware threads; this host has %d", n)
	}
	var out, errOut bytes.Buffer
	args := []string{"--icicle-device", device, "--constraints", "2^8", "--partitions", "2", "--key", "setup", "--timeline", "--warmups", "0"}
	if code := run(context.Background(), args, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "PEER_VERIFIED proofs=2") || strings.Count(errOut.String(), "GPU_END") != 2 {
		t.Fatalf("no verification or timeline:\n%s%s", out.String(), errOut.String())
	}
	// With ICICLE_STEP_PROFILE=1 gnark logs its MSMs.
	if os.Getenv("ICICLE_STEP_PROFILE") != "" && !strings.Contains(out.String(), "gnark_msm_b2_ms=") {
		t.Errorf("no gnark stage times:\n%s", out.String())
	}
}

// onlineCPUs counts the processors /sys/devices/system/cpu/online lists
// ("0-3,6"), as glibc's get_nprocs, behind std::thread's
// hardware_concurrency, does: Go's runtime.NumCPU counts the affinity mask,
// which ICICLE does not read.
func onlineCPUs() (int, error) {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(data)), ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			return 0, fmt.Errorf("cpu/online: %q: %w", data, err)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return 0, fmt.Errorf("cpu/online: %q: bad range %q", data, r)
			}
		}
		n += last - first + 1
	}
	return n, nil
}
