package groth16

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/provebench/provebench/gpu/circuit"
)

// Issue 13, item 10: a setup stops when its context is cancelled, rather
// than when it ends (28 s at 2^16).
func TestSetupStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := SetupContext(ctx, circuit.Params{Constraints: 1 << 10}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: err = %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, _, err := SetupContext(ctx, circuit.Params{Constraints: 1 << 16}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled during: err = %v", err)
	}
}
