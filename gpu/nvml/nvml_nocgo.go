//go:build !(linux && cgo)

package nvml

import (
	"errors"
	"fmt"
)

// NVML is an initialised NVML session. This build has none: go-nvml needs
// cgo on Linux, so Open always fails with ErrUnavailable.
type NVML struct{}

// Open fails: this build cannot load NVML.
func Open() (*NVML, error) {
	return nil, fmt.Errorf("%w: provebench was built without cgo or not for Linux", ErrUnavailable)
}

// Close does nothing.
func (n *NVML) Close() error { return nil }

// Devices is empty.
func (n *NVML) Devices() []Device { return nil }

// DriverVersion is empty.
func (n *NVML) DriverVersion() string { return "" }

// Sample fails: there is no session.
func (n *NVML) Sample(pid int, dst *GPUSample) error { return ErrUnavailable }

func (n *NVML) processes(int) ([]process, error) { return nil, errors.ErrUnsupported }

// EnergyMillijoules fails: there is no session.
func (n *NVML) EnergyMillijoules([]int) (uint64, error) { return 0, ErrUnavailable }
