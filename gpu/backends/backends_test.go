package backends

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/provebench/provebench/gpu/catalog"
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

// Every name in Names opens (or, for cuda in a binary without it, says
// so), the opened backend calls itself by that name, and what Built lists
// opens here; an unknown name is refused with the list.
func TestNames(t *testing.T) {
	for _, name := range catalog.Names() {
		b, err := Open(name, Options{})
		if name == CUDA && !CUDABuilt {
			if !errors.Is(err, ErrNoCUDA) {
				t.Errorf("Open(%q) without CUDA: %v, want ErrNoCUDA", name, err)
			}
			continue
		}
		if err != nil {
			if name == CUDA { // built with CUDA on a host without a GPU
				continue
			}
			t.Fatalf("Open(%q): %v", name, err)
		}
		if name != Automatic && b.Name() != name {
			t.Errorf("Open(%q) opened a backend named %q", name, b.Name())
		}
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		if err := Available(name); err != nil {
			t.Errorf("Available(%q) = %v after it opened", name, err)
		}
		if !strings.Contains(catalog.Doc(), name+" (") {
			t.Errorf("catalog.Doc() does not describe %q: %s", name, catalog.Doc())
		}
	}
	for _, name := range Built() {
		if !slices.Contains(catalog.Names(), name) {
			t.Errorf("Built() lists %q, which catalog.Names() lacks", name)
		}
	}
	if _, err := Open("tpu", Options{}); err == nil || !strings.Contains(err.Error(), strings.Join(catalog.Names(), ", ")) {
		t.Errorf("Open(tpu): %v, want the list of names", err)
	}
}

// OpenExplained says why only for auto: a backend asked for by name was
// not a fallback.
func TestOpenExplained(t *testing.T) {
	b, why, err := OpenExplained(CPU, Options{})
	if err != nil || why != nil {
		t.Fatalf("cpu: why %v, err %v", why, err)
	}
	b.Close()
	b, why, err = OpenExplained(Automatic, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Name() == CPU && why == nil {
		t.Error("auto fell back to the CPU without a reason")
	}
}
