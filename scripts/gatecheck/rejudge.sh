#!/usr/bin/env bash
# rejudge: the verdicts of a finished gate-check (run.sh's output folder),
# judged again by this checkout's provebench from the stored measurements:
# `provebench compare --paired DIR` is what ab concludes from its two sides,
# so a change to the verdict rules can be checked against the same pairs.
#
# Usage: scripts/gatecheck/rejudge.sh [OUT]   (default out/gate-check)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-out/gate-check}
BIN=$(mktemp -d)/provebench
go build -o "$BIN" ./cmd/provebench

count() { # kind: "<exit 3> <exit 4> <exit 0> of <runs>"
	local n=0 c0=0 c3=0 c4=0 rc
	for dir in "$OUT/$1"-*/; do
		[ -d "$dir/base" ] || continue
		n=$((n + 1))
		rc=0
		"$BIN" compare --paired "$dir" >/dev/null 2>&1 || rc=$?
		case $rc in 0) c0=$((c0 + 1)) ;; 3) c3=$((c3 + 1)) ;; 4) c4=$((c4 + 1)) ;; *) echo "$dir: exit $rc" >&2 ;; esac
	done
	echo "exit 3: $c3, exit 4: $c4, exit 0: $c0 of $n"
}

echo "re-judged $OUT:"
echo "  identical sides (3 is a false alarm):        $(count identical)"
echo "  ~15% slowdown (3 is a detection):            $(count slowdown)"
echo "  +20% wall time only (0 is a blind pass):     $(count wallonly)"
