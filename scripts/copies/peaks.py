#!/usr/bin/env python3
"""peaks.py BINARY ARGS...: run a command and print its memory peaks.

Samples /proc/PID/status and /proc/PID/smaps_rollup every 2 ms while it
runs and prints one line: the kernel's peak (VmHWM, exact, last read before
exit) and the highest sampled RssAnon, RssFile, RssShmem, FilePmdMapped and
AnonHugePages, in MiB. Used by scripts/copies/investigate.sh to show which
part of a process's peak belongs to the binary's own pages.
"""
import subprocess
import sys
import time

FIELDS = ["VmHWM", "RssAnon", "RssFile", "RssShmem", "FilePmdMapped", "AnonHugePages"]


def read(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                key, _, rest = line.partition(":")
                v = rest.split()
                if v and v[0].isdigit():
                    out[key] = int(v[0])
    except OSError:
        pass
    return out


def main():
    p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak, hwm = {}, 0
    while p.poll() is None:
        s = read(f"/proc/{p.pid}/status")
        s.update(read(f"/proc/{p.pid}/smaps_rollup"))
        if "VmHWM" in s:
            hwm = s["VmHWM"]
        for k, v in s.items():
            peak[k] = max(peak.get(k, 0), v)
        time.sleep(0.002)
    peak["VmHWM"] = hwm
    print(" ".join(f"{k}={peak.get(k, 0) / 1024:.1f}" for k in FIELDS), f"exit={p.returncode}")


if __name__ == "__main__":
    main()
