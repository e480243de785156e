#!/usr/bin/env bash
# make run with a neighbour that comes and goes (issue 39): RUNS runs of
# the quickstart exactly as `make run` runs it (run --backend cpu), from a
# binary built from a clone of the committed HEAD, with `yes` HOG_ON
# seconds on and HOG_OFF off (3 and 3) throughout. For each run it prints
# the summary's configurations and Pareto column (report.md) and the
# host-load warnings of the table and the report.
#
# Usage: scripts/copies/makerun.sh   RUNS=3 HOG_ON=3 HOG_OFF=3 OUT=out/makerun
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
HOG_ON=${HOG_ON:-3}
HOG_OFF=${HOG_OFF:-3}
OUT=${OUT:-out/makerun}
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
src=$(mktemp -d)
trap 'rm -rf "$src"; [ -z "${HOG_PID:-}" ] || kill "$HOG_PID" 2>/dev/null || true' EXIT
git clone -q . "$src/tree"
(cd "$src/tree" && go build -buildvcs=true -o "$OUT/provebench" ./cmd/provebench)
hog() {
	local pid=""
	trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; exit 0' TERM
	while true; do
		yes >/dev/null &
		pid=$!
		sleep "$HOG_ON" & wait $!
		kill "$pid"
		pid=""
		sleep "$HOG_OFF" & wait $!
	done
}
hog &
HOG_PID=$!
"$OUT/provebench" --version | head -2
for i in $(seq 1 "$RUNS"); do
	start=$SECONDS
	rc=0
	"$OUT/provebench" run --backend cpu --overwrite -o "$OUT/run-$i" >"$OUT/run-$i.txt" 2>&1 || rc=$?
	echo "run $i: exit $rc in $((SECONDS - start))s, load average $(cut -d' ' -f1 /proc/loadavg)"
	sed -n '/^configuration /,/^wrote:/p' "$OUT/run-$i.txt" | grep -v '^wrote:'
	grep -E '^\| (release|hold|budget|pacer) ' "$OUT/run-$i/report.md" | head -4 | awk -F'|' '{print "  report: " $2 "Pareto:" $(NF-1)}' || true
	grep -o "The host's load differed[^|]*" "$OUT/run-$i/report.md" | head -1 | cut -c1-400 | sed 's/^/  report warning: /' || true
done
