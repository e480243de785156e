#!/usr/bin/env bash
# rejudge: the verdicts of a finished gate-check (run.sh's output folder),
# judged again by this checkout's provebench from the stored measurements:
# `provebench compare --paired` is what ab concludes from its two sides, so
# a change to the verdict rules can be checked against the same pairs.
#
# Usage: scripts/gatecheck/rejudge.sh [OUT]   (default out/gate-check)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-out/gate-check}
BIN=$(mktemp -d)/provebench
go build -o "$BIN" ./cmd/provebench

count() { # kind
	local n=0 flagged=0 rc
	for dir in "$OUT/$1"-*/; do
		[ -f "$dir/base/results.json" ] || continue
		n=$((n + 1))
		rc=0
		"$BIN" compare --paired "$dir/base/results.json" "$dir/new/results.json" >/dev/null 2>&1 || rc=$?
		case $rc in 0) ;; 3) flagged=$((flagged + 1)) ;; *) echo "$dir: exit $rc" >&2 ;; esac
	done
	echo "$flagged of $n"
}

echo "re-judged $OUT:"
echo "  false alarms (identical sides):   $(count identical)"
echo "  detections (~15% slowdown):       $(count slowdown)"
