package backends

import (
	"errors"
	"testing"
)

// Issue 13, item 11: auto says why it did not use CUDA.
func TestAutoSaysWhyNotCUDA(t *testing.T) {
	b, why, err := Auto(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Name() == "cpu" && why == nil {
		t.Fatal("auto chose the CPU without a reason")
	}
	if !CUDABuilt && !errors.Is(why, ErrNoCUDA) {
		t.Fatalf("why = %v, want ErrNoCUDA", why)
	}
}
