package sample

import (
	"fmt"
	"os"
)

// Usage is the kernel's accounting of a finished child, from wait4.
type Usage struct {
	// PeakRSSBytes is the child's ru_maxrss, which on Linux is NOT always
	// the child's own peak. os/exec starts a child with clone(CLONE_VM |
	// CLONE_VFORK): until it execs, the child runs in its parent's address
	// space, and at exec the kernel folds that space's high-water mark into
	// the child's maxrss. So this is max(the parent's own peak RSS before
	// the start, the child's peak): the child's peak when it is above the
	// parent's VmHWM at the start, an upper bound otherwise. The child's
	// VmHWM (ProcSample.PeakRSSBytes, from the last sample, or read by the
	// child itself just before it ends) has no such contamination and is
	// the figure to prefer.
	PeakRSSBytes uint64
	// UserSeconds and SystemSeconds are the child's whole CPU time, at the
	// kernel's accounting resolution (finer than the sampled figures); like
	// the peak, they include any children the child itself waited for.
	UserSeconds   float64
	SystemSeconds float64
}

// ExitUsage reads the kernel's accounting of a child that has been waited
// for (exec.Cmd.ProcessState).
func ExitUsage(ps *os.ProcessState) (Usage, error) {
	if ps == nil {
		return Usage{}, fmt.Errorf("sample: no process state: the child has not been waited for")
	}
	return usageOf(ps)
}

// Times is CPU time in seconds, user and system.
type Times struct{ User, System float64 }

// Total is user and system time together.
func (t Times) Total() float64 { return t.User + t.System }

// CPUSeconds is CPUTimes' total: the CPU time, user and system, of this
// process (Self) or of its waited-for children (Children) so far.
func CPUSeconds(who int) (float64, bool) {
	t, ok := CPUTimes(who)
	return t.Total(), ok
}
