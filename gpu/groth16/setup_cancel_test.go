package groth16

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"testing"

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
	// Cancelled during: as the setup draws its toxic waste, past its
	// first look at the context, however late a loaded machine gets there.
	ctx, cancel = context.WithCancel(context.Background())
	rng := &cancelOnRead{r: rand.Reader, cancel: cancel}
	if _, _, err := SetupContext(ctx, circuit.Params{Constraints: 1 << 16}, rng); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled during: err = %v", err)
	}
	if rng.reads == 0 {
		t.Fatal("the setup drew no randomness: the cancellation did not come during it")
	}
}

// cancelOnRead is a source of randomness that cancels a context the first
// time it is read.
type cancelOnRead struct {
	r      io.Reader
	cancel context.CancelFunc
	reads  int
}

func (c *cancelOnRead) Read(p []byte) (int, error) {
	c.reads++
	c.cancel()
	return c.r.Read(p)
}
