package nvml

import (
	"os"
	"syscall"
)

// initPIDNamespaceInode is the inode of the host's (initial) PID namespace,
// which the kernel fixes (PROC_PID_INIT_INO in include/linux/proc_ns.h).
const initPIDNamespaceInode = 0xEFFFFFFC

// ProcessesHidden reports whether this process runs in a PID namespace of
// its own (a container): NVML lists processes by their host pids, so a
// process found in no device's list may hold GPU memory all the same, and
// its per-process figure is unknown rather than 0. An unreadable namespace
// counts as hidden: unknown is the safe answer.
func ProcessesHidden() bool {
	st, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return true
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return !ok || sys.Ino != initPIDNamespaceInode
}

// ProcessMemory returns the per-process GPU memory of a sample, or nil when
// it is not known: the driver listed the process without a figure, or the
// process is in no device's list while NVML cannot see it (hidden, see
// ProcessesHidden).
func (s *GPUSample) ProcessMemory(hidden bool) *uint64 {
	present := false
	for _, d := range s.Devices {
		present = present || d.ProcessPresent
	}
	if s.ProcessMemoryUnknown && s.ProcessMemoryBytes == 0 || !present && hidden {
		return nil
	}
	v := s.ProcessMemoryBytes
	return &v
}
