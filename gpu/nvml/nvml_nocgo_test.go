//go:build !(linux && cgo)

package nvml

import (
	"errors"
	"testing"
)

func TestOpenWithoutCgo(t *testing.T) {
	if _, err := Open(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open: %v, want ErrUnavailable", err)
	}
}
