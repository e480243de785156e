#!/usr/bin/env bash
# scripts/gate/h200.sh: the gate's measurements on one GPU host (issue 30;
# docs/ci-workflow.md reports them). Runs the named steps in order, each
# into $RESULTS/<step>-<n>, prints a line per verdict (exit status, the
# report's first lines), and packs $RESULTS into $PACK.
#
#   scripts/gate/h200.sh noise identical-synth23 precompute ...
#
# Steps (scenarios/gate-h200.yaml; each ab run once per RUNS):
#   noise             run synth23 6 times in one warm worker with host
#                     threads spinning (PROVEBENCH_CUDA_SYNC=spin), then
#                     blocking (the default), then 3 times a process each:
#                     where identical repetitions' CPU time differs
#   identical-synth23 ab of identical binaries, synthesis-bound
#   identical-gpu22   ab of identical binaries, GPU-bound
#   precompute        ab of the default binary against the same binary with
#                     PROVEBENCH_MSM_PRECOMPUTE=1 (a slower prover), synth23
#   slow21            ab of slow21 against gate-h200-slow.yaml's (one more
#                     synthesis round, ~10% more synthesis)
#   identical-big26   ab of identical binaries at 2^26 (scenarios/
#                     gate-h200-26.yaml: two warm sides do not fit, ab
#                     keeps one warm at a time; issue 43)
#   precompute-big26  the default binary against PROVEBENCH_MSM_PRECOMPUTE=1
#                     at 2^26
#
# Needs bin/provebench-cuda and the CUDA libraries in place (scripts/device/
# bundle.sh's archive, unpacked) and no Go.
set -uo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${RESULTS:-out/gate}
PACK=${PACK:-}
RUNS=${RUNS:-3}
BUDGET=${BUDGET:-10m}
# LIMIT: no verdict starts after this many seconds of the script (a call
# on a lent machine has a time limit; what finished is packed).
LIMIT=${LIMIT:-0}
BIN=$PWD/bin/provebench-cuda
export ICICLE_BACKEND_INSTALL_DIR=$PWD/.device/icicle-cuda
export LD_LIBRARY_PATH=$PWD/.device/icicle-cuda:$PWD/.icicle/install/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$RESULTS"
# The slower side of the precompute step: the same binary, no precomputed
# MSM bases.
cat >"$RESULTS/precompute1.sh" <<SH
#!/bin/sh
PROVEBENCH_MSM_PRECOMPUTE=1 exec "$BIN" "\$@"
SH
chmod +x "$RESULTS/precompute1.sh"

# At 2^26 the two sides are warm one at a time, so a side's repetitions
# come in blocks of one process each, and the work's CPU time (the host
# threads' waiting and copying beside a GPU-bound prover) carries each
# process's own level: one build's processes differed by more than the
# default 5% there (docs/results/h200-frozen26/README.md). The gate there
# rests on device time and memory, and judges CPU time against a
# threshold above that spread.
BIG26_THRESHOLDS=${BIG26_THRESHOLDS:-cpu_seconds=15%}

pack() { [ -z "$PACK" ] || tar -czf "$PACK" -C "$(dirname "$RESULTS")" "$(basename "$RESULTS")"; }
trap pack EXIT
late() { [ "$LIMIT" -gt 0 ] && [ "$SECONDS" -ge "$LIMIT" ] && { echo "LIMIT ${LIMIT}s reached: $1 not started"; return 0; }; return 1; }

verdict() { # name dir status seconds
	printf '%-24s exit %s in %4ss: %s\n' "$1" "$3" "$4" "$(head -1 "$2/ab.txt" 2>/dev/null | cut -c1-150)"
	sed -n '2,3p' "$2/ab.txt" 2>/dev/null | cut -c1-200 | sed 's/^/    /'
}

ab() { # name args...
	local name=$1; shift
	for i in $(seq 1 "$RUNS"); do
		late "$name-$i" && return
		local dir=$RESULTS/$name-$i start=$SECONDS
		"$BIN" ab -o "$dir" --pairs 6 --until-resolved "$BUDGET" "$@" >"$dir.log" 2>&1
		verdict "$name-$i" "$dir" $? $((SECONDS - start))
		pack
	done
}

noise() {
	local start=$SECONDS
	PROVEBENCH_CUDA_SYNC=spin "$BIN" run scenarios/gate-h200.yaml --filter '^synth23$' --repeat 6 --warmups 1 \
		--reuse-process 7 --no-report --no-calibration-cache -o "$RESULTS/noise-spin" >"$RESULTS/noise-spin.log" 2>&1
	echo "noise-spin exit $? in $((SECONDS - start))s"; tail -12 "$RESULTS/noise-spin.log" | head -3
	start=$SECONDS
	"$BIN" run scenarios/gate-h200.yaml --filter '^synth23$' --repeat 6 --warmups 1 \
		--reuse-process 7 --no-report --no-calibration-cache -o "$RESULTS/noise-block" >"$RESULTS/noise-block.log" 2>&1
	echo "noise-block exit $? in $((SECONDS - start))s"; tail -12 "$RESULTS/noise-block.log" | head -3
	start=$SECONDS
	"$BIN" run scenarios/gate-h200.yaml --filter '^synth23$' --repeat 3 --warmups 0 \
		--no-report --no-calibration-cache -o "$RESULTS/noise-process" >"$RESULTS/noise-process.log" 2>&1
	echo "noise-process exit $? in $((SECONDS - start))s"; tail -12 "$RESULTS/noise-process.log" | head -3
	pack
}

for step in "$@"; do
	case $step in
	noise) noise ;;
	identical-synth23) ab "$step" scenarios/gate-h200.yaml --filter '^synth23$' --base-binary "$BIN" --new-binary "$BIN" ;;
	identical-gpu22) ab "$step" scenarios/gate-h200.yaml --filter '^gpu22$' --base-binary "$BIN" --new-binary "$BIN" ;;
	precompute) ab "$step" scenarios/gate-h200.yaml --filter '^synth23$' --base-binary "$BIN" --new-binary "$RESULTS/precompute1.sh" ;;
	identical-big26) ab "$step" scenarios/gate-h200-26.yaml --threshold "$BIG26_THRESHOLDS" --base-binary "$BIN" --new-binary "$BIN" ;;
	precompute-big26) ab "$step" scenarios/gate-h200-26.yaml --threshold "$BIG26_THRESHOLDS" --base-binary "$BIN" --new-binary "$RESULTS/precompute1.sh" ;;
	slow21) ab "$step" --filter '^slow21$' --base-binary "$BIN" --new-binary "$BIN" \
		--base-scenario scenarios/gate-h200.yaml --new-scenario scenarios/gate-h200-slow.yaml ;;
	*) echo "scripts/gate/h200.sh: unknown step $step" >&2; exit 2 ;;
	esac
done
