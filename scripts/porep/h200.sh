#!/usr/bin/env bash
# scripts/porep/h200.sh: the runs of scenarios/porep-h200.yaml on one GPU
# host (issue 33; docs/results/h200-porep/README.md reports them). Three
# steps, each into $RESULTS:
#
#   preflight-model  run without --force, pre-flight predicting with the
#                    frozen prediction's calibration: its verdicts (exit 2
#                    when it refuses a configuration; nothing is written)
#   preflight-bound  the same on the strategies' bounds alone, as on a host
#                    without a calibration cache
#   runs             every configuration, 3 repetitions, --force (release
#                    must meet its wall), warm workers serving 3 each
#
# Needs bin/provebench-cuda and the CUDA libraries in place (scripts/device/
# bundle.sh's archive, unpacked), no Go. The key (18.5 GB) goes to
# $PROVEBENCH_CACHE (default ~/.cache/provebench/keys) once.
set -uo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${RESULTS:-out/porep}
BIN=$PWD/bin/provebench-cuda
export ICICLE_BACKEND_INSTALL_DIR=$PWD/.device/icicle-cuda
export LD_LIBRARY_PATH=$PWD/.device/icicle-cuda:$PWD/.icicle/install/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
D=docs/results/h200-validation
CAL=$D/calibration/results.json.gz,$D/interleaved21/results.json.gz,$D/validation-big24-mid23/results.json.gz,$D/validation-pileup22-ramp22/results.json.gz,$D/validation-synth21/results.json.gz
mkdir -p "$RESULTS"
for step in "$@"; do
	start=$SECONDS
	case $step in
	preflight-model)
		"$BIN" run scenarios/porep-h200.yaml --calibration "$CAL" --no-calibration-cache -o "$RESULTS/not-written" >"$RESULTS/preflight-model.log" 2>&1 ;;
	preflight-bound)
		"$BIN" run scenarios/porep-h200.yaml --no-calibration-cache -o "$RESULTS/not-written" >"$RESULTS/preflight-bound.log" 2>&1 ;;
	runs)
		"$BIN" run scenarios/porep-h200.yaml --force --reuse-process 3 --no-calibration-cache --no-report \
			-o "$RESULTS/runs" >"$RESULTS/runs.log" 2>&1 ;;
	*) echo "scripts/porep/h200.sh: unknown step $step" >&2; exit 2 ;;
	esac
	echo "$step: exit $? in $((SECONDS - start))s"
	tail -12 "$RESULTS/$step.log"
done
