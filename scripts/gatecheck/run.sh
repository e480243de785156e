#!/usr/bin/env bash
# gate-check: how often does `provebench ab` cry wolf, how often does it
# catch a real slowdown, and does it ever pass a regression it could not
# see, on this machine as it is, with a CPU hog of our own switched on and
# off during the runs?
#
#   identical  RUNS ab runs of base.yaml against itself: each exit 3 is a
#              false alarm (4, not judged, is not: it is not a pass either)
#   slowdown   RUNS ab runs of base.yaml against slow.yaml (17% more synthesis
#              rounds in a synthesis-bound pipeline): each exit 3 is a detection
#   wallonly   RUNS ab runs of wall.yaml against wall-slow.yaml (the same CPU
#              work, a longer wait: +20% wall time, CPU time unchanged): 3 is
#              a detection, 4 an honest "not judged", 0 a pass in blindness
#              (target: none)
#   ciyaml     RUNS ab runs of scenarios/ci.yaml against itself (the CI
#              gate's own file): 0 is the pass a team needs, 3 a false
#              alarm
#   ci         the time of one ab of scenarios/ci.yaml (same binary both sides)
#
# The kinds alternate, so all see the same machine. The hog (`yes`) runs
# HOG_ON seconds, then rests HOG_OFF seconds, over and over, out of step
# with the ab runs. Every ab run's output stays under $OUT for inspection.
#
# Usage: scripts/gatecheck/run.sh   (or make gate-check); RUNS=20 HOG_ON=3
# HOG_OFF=5 HOG_PROCS=1 OUT=out/gate-check KINDS="identical slowdown wallonly"
# CI=1 AB_FLAGS="--until-resolved 10m" override the defaults (AB_FLAGS: more
# flags for every ab run). A reduced check of the wall-only case alone,
# the hog always on, one `yes` per CPU:
#   RUNS=1 KINDS=wallonly CI=0 HOG_OFF=0 HOG_PROCS=$(nproc) scripts/gatecheck/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${RUNS:-20}
HOG_ON=${HOG_ON:-3}
HOG_OFF=${HOG_OFF:-5}
HOG_PROCS=${HOG_PROCS:-1}
AB_FLAGS=${AB_FLAGS:-}
OUT=${OUT:-out/gate-check}
KINDS=${KINDS:-identical slowdown wallonly}
CI=${CI:-1}
DIR=scripts/gatecheck

rm -rf "$OUT"
mkdir -p "$OUT"
# A copy of the binary, so a rebuild during the check changes nothing.
BIN="$OUT/provebench"
go build -buildvcs=auto -o "$BIN" ./cmd/provebench

# The hog: HOG_PROCS copies of `yes` (default 1; the machine's other load
# does the rest); stopped by PID when the script ends. HOG_OFF=0 keeps it on.
hog() {
	local pids=()
	trap '[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; exit 0' TERM
	while true; do
		for _ in $(seq "$HOG_PROCS"); do
			yes >/dev/null &
			pids+=($!)
		done
		sleep "$HOG_ON" & wait $!
		if [ "$HOG_OFF" = 0 ]; then
			# Always on: the copies started keep running; start no more
			# (each round used to add HOG_PROCS more, without bound).
			while true; do sleep 60 & wait $!; done
		fi
		[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}"
		pids=()
		sleep "$HOG_OFF" & wait $!
	done
}
hog &
HOG_PID=$!
trap 'kill "$HOG_PID" 2>/dev/null || true' EXIT

ab() { # name base-scenario new-scenario
	local rc=0
	local start=$SECONDS
	# shellcheck disable=SC2086 # AB_FLAGS is a list of flags
	"$BIN" ab -o "$OUT/$1" --base-scenario "$2" --new-scenario "$3" $AB_FLAGS >"$OUT/$1.txt" 2>&1 || rc=$?
	echo "$((SECONDS - start))" >"$OUT/$1.seconds"
	echo "$rc"
}

# estimates prints an ab run's change of wall and CPU time with intervals.
estimates() {
	local w c
	w=$(grep -E '^[^ ]+ +seconds_per_proof ' "$1" | grep -o -E '[-+][0-9.]+% \[[^]]*\]' | head -1 || true)
	c=$(grep -E '^ +cpu_seconds ' "$1" | grep -o -E '[-+][0-9.]+% \[[^]]*\]' | head -1 || true)
	echo "s/proof ${w:-?}, cpu ${c:-?}"
}

declare -A sides=(
	[identical]="$DIR/base.yaml $DIR/base.yaml"
	[slowdown]="$DIR/base.yaml $DIR/slow.yaml"
	[wallonly]="$DIR/wall.yaml $DIR/wall-slow.yaml"
	[ciyaml]="scenarios/ci.yaml scenarios/ci.yaml"
)
declare -A exits # kind:code -> count
for kind in $KINDS; do
	[ -n "${sides[$kind]:-}" ] || { echo "unknown kind $kind (identical, slowdown, wallonly, ciyaml)" >&2; exit 2; }
	for code in 0 1 2 3 4; do exits[$kind:$code]=0; done
done

start=$(date +%s)
for i in $(seq 1 "$RUNS"); do
	line=""
	for kind in $KINDS; do
		# shellcheck disable=SC2086 # two paths
		rc=$(ab "$kind-$i" ${sides[$kind]})
		exits[$kind:$rc]=$((${exits[$kind:$rc]:-0} + 1))
		line+="; $kind exit $rc in $(cat "$OUT/$kind-$i.seconds")s ($(estimates "$OUT/$kind-$i.txt"))"
	done
	printf 'run %2d/%d%s\n' "$i" "$RUNS" "$line"
done
elapsed=$(($(date +%s) - start))
kill "$HOG_PID" 2>/dev/null || true

count() { echo "${exits[$1:$2]:-0}"; }
echo
echo "gate-check on $(nproc) CPUs, load average now $(cut -d' ' -f1-3 /proc/loadavg), hog of $HOG_PROCS ${HOG_ON}s on / ${HOG_OFF}s off:"
for kind in $KINDS; do
	other=$((RUNS - $(count "$kind" 0) - $(count "$kind" 3) - $(count "$kind" 4)))
	case $kind in
	identical) echo "  identical sides:      false alarms (3) $(count identical 3) of $RUNS (target: at most 1); not judged (4) $(count identical 4); passed (0) $(count identical 0)" ;;
	slowdown) echo "  ~15% slowdown:        detections (3) $(count slowdown 3) of $RUNS (target: at least 19); not judged (4) $(count slowdown 4); passed (0) $(count slowdown 0)" ;;
	wallonly) echo "  +20% wall time only:  detections (3) $(count wallonly 3), not judged (4) $(count wallonly 4), passed blind (0) $(count wallonly 0) of $RUNS (target: 0 passed)" ;;
	ciyaml) echo "  ci.yaml, identical:   passed (0) $(count ciyaml 0) of $RUNS; not judged (4) $(count ciyaml 4); false alarms (3) $(count ciyaml 3)" ;;
	esac
	[ "$other" -eq 0 ] || echo "    ($kind: $other runs failed otherwise: exit 1 or 2)"
done
echo "  ($RUNS rounds of: $KINDS, in ${elapsed}s; outputs in $OUT)"

if [ "$CI" = 1 ]; then
	ci_start=$(date +%s)
	ci_rc=0
	"$BIN" ab scenarios/ci.yaml -o "$OUT/ci" >"$OUT/ci.txt" 2>&1 || ci_rc=$?
	echo "  one ab of scenarios/ci.yaml:      $(($(date +%s) - ci_start))s, exit $ci_rc   (target: under 180 s)"
fi
