#!/usr/bin/env bash
# gate-check: how often does `provebench ab` cry wolf, and how often does it
# catch a real slowdown, on this machine as it is, with a CPU hog of our own
# switched on and off during the runs?
#
#   identical  RUNS ab runs of base.yaml against itself: each exit 3 is a false alarm
#   slowdown   RUNS ab runs of base.yaml against slow.yaml (17% more synthesis
#              rounds in a synthesis-bound pipeline): each exit 3 is a detection
#   ci         the time of one ab of scenarios/ci.yaml (same binary both sides)
#
# The two kinds alternate, so both see the same machine. The hog (`yes`)
# runs HOG_ON seconds, then rests HOG_OFF seconds, over and over, out of step
# with the ab runs. Every ab run's output stays under $OUT for inspection.
#
# Usage: scripts/gatecheck/run.sh   (or make gate-check); RUNS=20 HOG_ON=3
# HOG_OFF=5 OUT=out/gate-check override the defaults.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${RUNS:-20}
HOG_ON=${HOG_ON:-3}
HOG_OFF=${HOG_OFF:-5}
OUT=${OUT:-out/gate-check}
DIR=scripts/gatecheck

rm -rf "$OUT"
mkdir -p "$OUT"
# A copy of the binary, so a rebuild during the check changes nothing.
BIN="$OUT/provebench"
go build -buildvcs=auto -o "$BIN" ./cmd/provebench

# The hog: its own process group, stopped by PID when the script ends.
hog() {
	local pid=""
	trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; exit 0' TERM
	while true; do
		yes >/dev/null &
		pid=$!
		sleep "$HOG_ON" & wait $!
		kill "$pid"; pid=""
		sleep "$HOG_OFF" & wait $!
	done
}
hog &
HOG_PID=$!
trap 'kill "$HOG_PID" 2>/dev/null || true' EXIT

ab() { # name new-scenario
	local rc=0
	"$BIN" ab -o "$OUT/$1" --base-scenario "$DIR/base.yaml" --new-scenario "$2" >"$OUT/$1.txt" 2>&1 || rc=$?
	echo "$rc"
}

# estimates prints an ab run's change of wall and CPU time with intervals.
estimates() {
	local w c
	w=$(grep -E '^[^ ]+ +seconds_per_proof ' "$1" | grep -o -E '[-+][0-9.]+% \[[^]]*\]' | head -1 || true)
	c=$(grep -E '^ +cpu_seconds ' "$1" | grep -o -E '[-+][0-9.]+% \[[^]]*\]' | head -1 || true)
	echo "s/proof ${w:-?}, cpu ${c:-?}"
}

false_alarms=0 detections=0 errors=0
start=$(date +%s)
for i in $(seq 1 "$RUNS"); do
	rc=$(ab "identical-$i" "$DIR/base.yaml")
	case $rc in 0) ;; 3) false_alarms=$((false_alarms + 1)) ;; *) errors=$((errors + 1)) ;; esac
	est_same=$(estimates "$OUT/identical-$i.txt")
	rc2=$(ab "slowdown-$i" "$DIR/slow.yaml")
	case $rc2 in 3) detections=$((detections + 1)) ;; 0) ;; *) errors=$((errors + 1)) ;; esac
	est_slow=$(estimates "$OUT/slowdown-$i.txt")
	printf 'run %2d/%d: identical exit %s (%s); slowdown exit %s (%s)\n' "$i" "$RUNS" "$rc" "$est_same" "$rc2" "$est_slow"
done
elapsed=$(($(date +%s) - start))

kill "$HOG_PID" 2>/dev/null || true
ci_start=$(date +%s)
ci_rc=0
"$BIN" ab scenarios/ci.yaml -o "$OUT/ci" >"$OUT/ci.txt" 2>&1 || ci_rc=$?
ci_secs=$(($(date +%s) - ci_start))

echo
echo "gate-check on $(nproc) CPUs, load average now $(cut -d' ' -f1-3 /proc/loadavg), hog ${HOG_ON}s on / ${HOG_OFF}s off:"
echo "  false alarms (identical sides):   $false_alarms of $RUNS   (target: at most 1)"
echo "  detections (~15% slowdown):       $detections of $RUNS   (target: at least 19)"
echo "  runs that failed otherwise:       $errors"
echo "  one ab of scenarios/ci.yaml:      ${ci_secs}s, exit $ci_rc   (target: under 180 s)"
echo "  ($((2 * RUNS)) ab runs in ${elapsed}s; outputs in $OUT)"
