#!/usr/bin/env bash
# copies check (issue 39): does `provebench ab` judge what the code does,
# and not the binary's own pages or the host's load?
#
#   copies     ab of two byte-identical copies of one build at different
#              paths (one the linker's output, one a fresh `cp` into a
#              temporary folder, made anew for every run), sides swapped
#              every other run, scenarios/ci.yaml, --until-resolved 5m.
#              Pass: never exit 3, and the work's memory figure
#              (peak_anon_bytes, the one ab gates) never judged worse,
#              better or regressed. The kernel's whole peak
#              (peak_rss_bytes) is printed for the record: it counts the
#              binary's own pages, which the copies hold in different
#              numbers, so it differs between them by design.
#   memreg     the same copies, the new side's pipeline holding more memory
#              at its peak (scripts/copies/ci-mem.yaml: ci.yaml with larger
#              datasets). Pass: exit 3, peak_anon_bytes a regression.
#   synth      identical sides of a synthesis-heavy scenario
#              (scripts/copies/synth.yaml, repetitions of seconds), ab's
#              default settings. Pass: exit 0 within 5 minutes.
#   synthslow  synth.yaml against synth-slow.yaml (10% more synthesis
#              work). Pass: exit 3.
#
# A neighbour of our own (`yes`, NEIGHBOUR=1, the default) runs HOG_ON
# seconds, rests HOG_OFF seconds (3 and 3), out of step with the runs;
# NEIGHBOUR=0 runs without it (the machine's other load still counts: the
# summary records the load average around each run). The kinds alternate,
# so all see the same machine. Every ab run's output stays under $OUT.
#
# Usage: scripts/copies/check.sh   RUNS=3 KINDS="copies memreg synth synthslow"
# NEIGHBOUR=1 HOG_ON=3 HOG_OFF=3 OUT=out/copies-check UNTIL=5m override the
# defaults. Exit status: 0 when every run passed, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${RUNS:-3}
KINDS=${KINDS:-copies memreg synth synthslow}
NEIGHBOUR=${NEIGHBOUR:-1}
HOG_ON=${HOG_ON:-3}
HOG_OFF=${HOG_OFF:-3}
UNTIL=${UNTIL:-5m}
OUT=${OUT:-out/copies-check}
DIR=scripts/copies

rm -rf "$OUT"
mkdir -p "$OUT"
TMPS=()
cleanup() {
	[ -z "${HOG_PID:-}" ] || kill "$HOG_PID" 2>/dev/null || true
	[ ${#TMPS[@]} -eq 0 ] || rm -rf "${TMPS[@]}"
}
trap cleanup EXIT
# The linker's copy: built into $OUT from a clone of the committed HEAD, so
# that the results record the commit (Go stamps none in a git worktree,
# whose .git is a file) and nothing uncommitted is measured.
OUT=$(cd "$OUT" && pwd)
LINKED="$OUT/provebench"
src=$(mktemp -d)
COPIES=$(mktemp -d)
TMPS+=("$src" "$COPIES")
git clone -q . "$src/tree"
(cd "$src/tree" && go build -buildvcs=true -o "$LINKED" ./cmd/provebench)
# fresh_copy prints the path of a new `cp` of the build in a new temporary
# folder: its page cache is cp's, not the linker's.
fresh_copy() {
	local d
	d=$(mktemp -d -p "$COPIES")
	cp "$LINKED" "$d/provebench"
	echo "$d/provebench"
}

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
if [ "$NEIGHBOUR" = 1 ]; then
	hog &
	HOG_PID=$!
fi

load() { cut -d' ' -f1 /proc/loadavg; }

# memory_judged prints, from ab's full report (ab.txt: the terminal shows a
# brief without the "~" rows), the work's memory figure (peak_anon_bytes, the one
# ab gates) wherever an ab output judged it anything but "~" (worse,
# better, regression), with its verdict, one per line.
memory_judged() {
	grep -oE 'peak_anon_bytes .* pairs +(worse|better|regression)' "$1" | awk '{print $1 " " $NF}' || true
}

# kernel_peak prints what the output said of the kernel's whole peak
# (peak_rss_bytes: shown, not gated, the binary's own pages included), for
# the record.
kernel_peak() {
	grep -oE 'peak_rss_bytes .* pairs +[^ ]+' "$1" | awk '{print $NF}' | sort | uniq -c | awk '{printf "%s%s x%s", (NR>1?", ":""), $2, $1}' || true
}

declare -A pass fail
for kind in $KINDS; do pass[$kind]=0; fail[$kind]=0; done
for i in $(seq 1 "$RUNS"); do
	for kind in $KINDS; do
		dir="$OUT/$kind-$i"
		base=$LINKED new=$LINKED
		args=()
		case $kind in
		copies | memreg)
			copy=$(fresh_copy)
			# Sides swapped every other run of each kind.
			if [ $((i % 2)) = 1 ]; then base=$copy; else new=$copy; fi
			args=(--until-resolved "$UNTIL" --base-scenario scenarios/ci.yaml)
			if [ "$kind" = memreg ]; then args+=(--new-scenario "$DIR/ci-mem.yaml"); else args+=(--new-scenario scenarios/ci.yaml); fi
			;;
		synth) args=(--base-scenario "$DIR/synth.yaml" --new-scenario "$DIR/synth.yaml") ;;
		synthslow) args=(--base-scenario "$DIR/synth.yaml" --new-scenario "$DIR/synth-slow.yaml") ;;
		*) echo "unknown kind $kind (copies, memreg, synth, synthslow)" >&2; exit 2 ;;
		esac
		l0=$(load)
		start=$SECONDS
		rc=0
		"$LINKED" ab -o "$dir" --base-binary "$base" --new-binary "$new" "${args[@]}" >"$dir.txt" 2>&1 || rc=$?
		secs=$((SECONDS - start))
		judged=$(memory_judged "$dir/ab.txt" | paste -sd, -)
		ok=0
		case $kind in
		copies) [ "$rc" != 3 ] && [ -z "$judged" ] && ok=1 ;;
		memreg) [ "$rc" = 3 ] && [[ "$judged" == *regression* ]] && ok=1 ;;
		synth) [ "$rc" = 0 ] && [ "$secs" -le 300 ] && ok=1 ;;
		synthslow) [ "$rc" = 3 ] && ok=1 ;;
		esac
		if [ "$ok" = 1 ]; then pass[$kind]=$((${pass[$kind]} + 1)); else fail[$kind]=$((${fail[$kind]} + 1)); fi
		side="base $( [ "$base" = "$LINKED" ] && echo linked || echo cp ), new $( [ "$new" = "$LINKED" ] && echo linked || echo cp )"
		printf '%-9s %d: exit %d in %ds (%s; load %s -> %s); peak_anon_bytes judged: %s (peak_rss_bytes, not gated: %s); %s\n' "$kind" "$i" "$rc" "$secs" "$side" "$l0" "$(load)" "${judged:-never}" "$(kernel_peak "$dir/ab.txt")" "$( [ $ok = 1 ] && echo pass || echo FAIL)"
		echo "    $(grep -m1 -E '^provebench ab: ' "$dir.txt" | cut -c1-300)"
	done
done

echo
echo "copies check on $(nproc) CPUs, commit $(git rev-parse --short HEAD), neighbour $( [ "$NEIGHBOUR" = 1 ] && echo "${HOG_ON}s on / ${HOG_OFF}s off" || echo none), load average now $(cut -d' ' -f1-3 /proc/loadavg):"
all=0
for kind in $KINDS; do
	echo "  $kind: ${pass[$kind]} of $RUNS passed"
	[ "${fail[$kind]}" = 0 ] || all=1
done
exit $all
