#!/usr/bin/env bash
# scripts/bias/h200.sh: issue 33 item 4's runs on one GPU host
# (docs/results/h200-porep/README.md, "The next run for item 4", has the
# session's commands). Two steps, one a call, each into $RESULTS:
#
#   calibrate  call A: scenarios/bias-h200-cal.yaml's shapes at 2^21 and
#              2^22, interleaved (repetition 1 of every shape, then 2, ...)
#              -> $RESULTS/calibration
#   validate   call B: scenarios/bias-h200.yaml's configurations at 2^24,
#              a warm worker serving each configuration's 3 repetitions
#              -> $RESULTS/runs
#   validate-interleaved
#              call B, measured as the calibration is: interleaved
#              (repetition 1 of every configuration, then 2, ...), a
#              process a repetition, its clock warm
#              -> $RESULTS/runs
#   pretouch   writes zeros over PRETOUCH_GIB GiB of memory (default 90),
#              PRETOUCH_PASSES times (default 2), each pass timed into
#              $RESULTS/pretouch.txt: a fresh VM's memory is backed by
#              its host on first touch, and the first minutes of a lease
#              ran the same synthesis up to 1.4 times slower
#              (docs/results/h200-bias); a first pass much slower than the
#              second says the host was still backing the guest's memory
#   same-gpu   refuses (exit 3, before any run) when this machine's GPU is
#              not the one of SAME_GPU_AS (an env.txt of call A's): a
#              prediction calibrated on one machine judged on another's
#              runs measures the machines' difference (h200-bias-r3)
#   anchor     after call B's runs, CAL_FILE's shapes matching ANCHOR
#              (default ^cal22) again, ANCHOR_REPEATS times (default 3),
#              interleaved -> $RESULTS/anchor: the host's synthesis speed
#              then against call A's, to read a miss by; never fitted
#
# Between them, on the machine with Go and git: scripts/bias/predict.sh
# predict, and the prediction committed, before validate runs.
#
# Each step prints the run's last lines, one per configuration (finished
# repetitions, partitions/s, s/proof, peak RSS), and $RESULTS is packed
# into $PACK (a .tar.gz, under the lent machine's $OUT) after each step and
# on exit. LIMIT: seconds of the script after which a run is interrupted
# (SIGINT: the repetition in flight is recorded as cancelled, the finished
# ones kept, the summary printed) and no step starts; 0: none.
#
# Needs bin/provebench-cuda and the CUDA libraries in place (scripts/device/
# bundle.sh's archive, unpacked) and no Go. The same steps run anywhere on
# the CPU backend for a rehearsal, the files given by CAL_FILE and FILE
# (small copies: scripts/bias/rehearse.sh): BIN=bin/provebench BACKEND=cpu.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
RESULTS=${RESULTS:-out/bias}
PACK=${PACK:-}
LIMIT=${LIMIT:-0}
BIN=${BIN:-$PWD/bin/provebench-cuda}
BACKEND=${BACKEND:-}
CAL_FILE=${CAL_FILE:-scenarios/bias-h200-cal.yaml}
FILE=${FILE:-scenarios/bias-h200.yaml}
export ICICLE_BACKEND_INSTALL_DIR=$PWD/.device/icicle-cuda
export LD_LIBRARY_PATH=$PWD/.device/icicle-cuda:$PWD/.icicle/install/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$RESULTS" || exit 2
[ -x "$BIN" ] || { echo "scripts/bias/h200.sh: no binary $BIN (unpack scripts/device/bundle.sh's archive, or set BIN)" >&2; exit 2; }

pack() { [ -z "$PACK" ] || tar -czf "$PACK" -C "$(dirname "$RESULTS")" "$(basename "$RESULTS")"; }
trap pack EXIT

# left is the seconds the step may run before LIMIT; 0 without a LIMIT.
left() { [ "$LIMIT" -gt 0 ] && echo $((LIMIT - SECONDS)) || echo 0; }

# cuda_sync makes sure a CUDA prover opens: the host threads' blocking
# wait for the device fails to apply where a context is already up (it
# did on the H200 of h200-porep), and then CUDA's own wait is the one
# that works. Both calls record the mode they ran with (and every
# results document holds it under environment.settings).
cuda_sync() {
	[ "${BACKEND:-cuda}" = cuda ] || return 0
	local log=$RESULTS/cuda-sync.log
	if ! "$BIN" prove --backend cuda --constraints 2^12 --out "$RESULTS/cuda-sync" >"$log" 2>&1; then
		grep -q 'PROVEBENCH_CUDA_SYNC=default' "$log" || { echo "a CUDA proof failed:"; tail -5 "$log"; exit 1; }
		export PROVEBENCH_CUDA_SYNC=default
		"$BIN" prove --backend cuda --constraints 2^12 --out "$RESULTS/cuda-sync" >>"$log" 2>&1 ||
			{ echo "a CUDA proof failed with PROVEBENCH_CUDA_SYNC=default too:"; tail -5 "$log"; exit 1; }
	fi
	local mode=${PROVEBENCH_CUDA_SYNC:-block}
	echo "PROVEBENCH_CUDA_SYNC=$mode" | tee "$RESULTS/cuda-sync.txt"
}

# step runs one scenario file into $RESULTS/NAME, stopped at LIMIT.
step() { # name file run-flags...
	local name=$1 file=$2 start=$SECONDS limit status
	shift 2
	limit=$(left)
	if [ "$LIMIT" -gt 0 ] && [ "$limit" -le 0 ]; then
		echo "LIMIT ${LIMIT}s reached: $name not started"
		return
	fi
	local cmd=("$BIN" run "$file" ${BACKEND:+--backend "$BACKEND"} --no-calibration-cache --no-report -o "$RESULTS/$name" "$@")
	echo "\$ ${cmd[*]}" >"$RESULTS/$name.log"
	# The host beside the run, a line a second: the same code's synthesis
	# took 1.4 times as long in one minute of h200-bias's call B as in the
	# next, with no steal and no other process recorded; the page cache's
	# dirty bytes (a key cache just written) and the load are what the
	# results document does not hold.
	(while sleep 1; do
		echo "$(date +%s) $(awk '/^(Dirty|Writeback):/ {printf "%s %s kB ", $1, $2}' /proc/meminfo)load $(cut -d' ' -f1-3 /proc/loadavg) $(awk '/^cpu / {print "cpu", $2, $3, $4, $5, $6, $7, $8, $9}' /proc/stat)"
	done) >"$RESULTS/$name.host.log" 2>/dev/null &
	local sampler=$!
	if [ "$LIMIT" -gt 0 ]; then
		timeout --signal=INT --kill-after=30 "$limit" "${cmd[@]}" >>"$RESULTS/$name.log" 2>&1
	else
		"${cmd[@]}" >>"$RESULTS/$name.log" 2>&1
	fi
	status=$?
	kill "$sampler" 2>/dev/null
	[ "$status" -eq 124 ] && echo "$name: interrupted at LIMIT ${LIMIT}s; the finished repetitions are kept"
	echo "$name: exit $status in $((SECONDS - start))s"
	# The run's summary: a line per configuration.
	sed -n '/^configuration  *ok\/runs/,/^(medians/p' "$RESULTS/$name.log"
	grep -E '^(generated random key|provebench: warning)' "$RESULTS/$name.log"
	pack
}

# pretouch writes zeros over PRETOUCH_GIB GiB, PRETOUCH_PASSES times, and
# times each pass (python3's bytearray zero-fills what it allocates).
pretouch() {
	local gib=${PRETOUCH_GIB:-90} passes=${PRETOUCH_PASSES:-2}
	python3 - "$gib" "$passes" <<'PY' | tee -a "$RESULTS/pretouch.txt"
import sys, time
gib, passes = int(sys.argv[1]), int(sys.argv[2])
for i in range(passes):
    t = time.monotonic()
    b = bytearray(gib << 30)
    del b
    s = time.monotonic() - t
    print(f"pretouch pass {i + 1}: {gib} GiB in {s:.1f} s ({gib / s:.1f} GiB/s)", flush=True)
PY
	# The runs do not depend on it: a failed pretouch is said, not fatal.
	[ "${PIPESTATUS[0]}" -eq 0 ] || echo "pretouch failed (see above): the runs go on without it" | tee -a "$RESULTS/pretouch.txt"
}

# same_gpu refuses a machine whose GPU is not SAME_GPU_AS's.
same_gpu() {
	local want got
	want=$(grep -o 'GPU-[0-9a-f-]*' "${SAME_GPU_AS:?same-gpu needs SAME_GPU_AS, an env.txt}" | head -1)
	got=$(grep -o 'GPU-[0-9a-f-]*' "$RESULTS/env.txt" | head -1)
	if [ -z "$want" ] || [ "$want" != "$got" ]; then
		echo "same-gpu: this machine's GPU is ${got:-none}, call A's was ${want:-none}: not the same machine, nothing run"
		exit 3
	fi
	echo "same-gpu: $got, as in call A"
}

"$BIN" --version >"$RESULTS/version.txt" 2>&1
"$BIN" detect >"$RESULTS/env.txt" 2>&1
head -2 "$RESULTS/version.txt"
for s in "$@"; do
	case $s in
	calibrate)
		cuda_sync
		step calibration "$CAL_FILE" --interleave ;;
	validate)
		cuda_sync
		step runs "$FILE" --reuse-process 3 ;;
	validate-interleaved)
		# As the calibration is measured: interleaved, a process a
		# repetition whose clock starts warm, so that the host's drift
		# falls on every configuration alike (bias-h200-r3.yaml says why).
		cuda_sync
		step runs "$FILE" --interleave ;;
	pretouch)
		pretouch ;;
	same-gpu)
		same_gpu ;;
	anchor)
		step anchor "$CAL_FILE" --interleave --filter "${ANCHOR:-^cal22}" --repeat "${ANCHOR_REPEATS:-3}" ;;
	*) echo "scripts/bias/h200.sh: unknown step $s (pretouch, same-gpu, calibrate, validate, validate-interleaved, anchor)" >&2; exit 2 ;;
	esac
done
