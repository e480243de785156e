#!/usr/bin/env bash
# Why do byte-identical copies of one provebench binary show different
# peak RSS? Runs `prove --constraints 2^10` REPS times from each of three
# copies and prints their memory peaks (scripts/copies/peaks.py):
#
#   linked   bin/provebench as the Go linker wrote it (make build), its
#            page cache as the linker left it
#   cp       a fresh `cp` of it into a temporary folder
#   evicted  the linked binary again after its page cache was dropped
#            (posix_fadvise DONTNEED of that one file: nothing else is
#            evicted), so that running it reads it back from disk
#
# with the kernel's THP settings and /proc/meminfo's file huge pages
# before and after. Usage: scripts/copies/investigate.sh [REPS]  (default 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-3}
PEAKS=scripts/copies/peaks.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The linker's copy, built from a clone of the committed HEAD so that it
# records its commit (Go stamps none in a git worktree) into bin/, as make
# build would.
git clone -q . "$tmp/tree"
(cd "$tmp/tree" && go build -buildvcs=true -o "$OLDPWD/bin/provebench" ./cmd/provebench)
cp bin/provebench "$tmp/provebench"

echo "$(bin/provebench --version | tr '\n' ' '); kernel $(uname -r); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
for f in enabled defrag shmem_enabled; do
	echo "transparent_hugepage/$f: $(cat /sys/kernel/mm/transparent_hugepage/$f 2>/dev/null || echo n/a)"
done
grep -E '^(FileHugePages|FilePmdMapped)' /proc/meminfo | tr -s ' ' | paste -sd';' | sed 's/^/meminfo before: /'
run() { # label binary
	for i in $(seq "$REPS"); do
		echo "$1 $i: $(python3 "$PEAKS" "$2" prove --constraints 2^10) (MiB)"
	done
}
run linked bin/provebench
run cp "$tmp/provebench"
sync bin/provebench
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' bin/provebench
run evicted bin/provebench
grep -E '^(FileHugePages|FilePmdMapped)' /proc/meminfo | tr -s ' ' | paste -sd';' | sed 's/^/meminfo after: /'
