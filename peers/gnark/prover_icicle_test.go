//go:build icicle

package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestICICLEProofsVerify proves through gnark's ICICLE prover on ICICLE's
// CPU device (or $PEER_GNARK_ICICLE_DEVICE) and checks the proofs with
// gnark's verifier. Opt in with PEER_GNARK_ICICLE_TEST=1 (make
// test-peer-icicle): it needs ICICLE's front end on the library path, and
// ICICLE's CPU device aborts where it sees fewer than three hardware
// threads.
func TestICICLEProofsVerify(t *testing.T) {
	if os.Getenv("PEER_GNARK_ICICLE_TEST") != "1" {
		t.Skip("set PEER_GNARK_ICICLE_TEST=1 (make test-peer-icicle)")
	}
	device := os.Getenv("PEER_GNARK_ICICLE_DEVICE")
	if device == "" {
		device = "CPU"
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
