#!/bin/sh
# scripts/peer/bench.sh: provebench's provers and gnark's, side by side, as
# Go benchmark lines (benchstat reads them):
#
#   BenchmarkPeer/<prover>/2^k/single   one partition proved from a ready
#       witness, the key resident, after a warm-up
#   BenchmarkPeer/<prover>/2^k/steady   partitions back to back, as the
#       prover runs them at best, per partition
#
# with a ms/partition metric and each prover's stage times where it reports
# them (ms/op). Provers: provebench-cuda (bin/cuda.test: BenchmarkProve,
# BenchmarkSteadyState/pinned-dataset), gnark-icicle (bin/peer-gnark-cuda
# --bench), provebench-cpu (bin/cpu.test: BenchmarkProve,
# BenchmarkSteadyState), gnark-cpu (bin/peer-gnark --bench). Every prover's
# lines follow a "commit:" line, the commit its binary was built from.
# docs/peer.md says what each figure includes.
#
# Needs no Go: build the binaries where Go is (make peer-bench-bin, CUDA=1
# for the CUDA ones) and carry bin/, .icicle/install and .device/.
#
# Environment:
#   PEER_BENCH_LOG         log2 sizes, comma-separated (default 12,14)
#   PEER_BENCH_COUNT       iterations of each benchmark, >= 3 (default 3)
#   PEER_BENCH_PROVERS     provers to run (default: each whose binary is in
#                          PEER_BENCH_BIN), space-separated
#   PEER_BENCH_KINDS       single and/or steady (default "single steady")
#   PEER_BENCH_PARTITIONS  gnark's steady state: partitions per iteration
#                          (default 8, as provebench-cuda's)
#   PEER_BENCH_BIT_FRACTION  the share of private wires that are bits, for
#                          every prover (default: the family's, 0.5)
#   PEER_BENCH_KEY         gnark's key: auto (a real setup up to 2^16, as
#                          provebench's keys), setup or random (default auto)
#   PEER_BENCH_BIN         where the binaries are (default bin)
#   PROVEBENCH_CACHE       provebench's key cache (keys made once, reused)
#   ICICLE_BACKEND_INSTALL_DIR  ICICLE's CUDA backend (default .device/icicle-cuda)
set -eu

sizes=$(echo "${PEER_BENCH_LOG:-12,14}" | tr ',' ' ')
count=${PEER_BENCH_COUNT:-3}
parts=${PEER_BENCH_PARTITIONS:-8}
key=${PEER_BENCH_KEY:-auto}
kinds=${PEER_BENCH_KINDS:-single steady}
bin=${PEER_BENCH_BIN:-bin}
fraction=${PEER_BENCH_BIT_FRACTION:-0.5}

die() { echo "scripts/peer/bench.sh: $*" >&2; exit 2; }
case $count in '' | *[!0-9]*) die "PEER_BENCH_COUNT=$count: want a number >= 3" ;; esac
[ "$count" -ge 3 ] || die "PEER_BENCH_COUNT=$count: want at least 3 iterations"
for k in $sizes; do
	case $k in '' | *[!0-9]*) die "PEER_BENCH_LOG: $k is not a log2 size" ;; esac
done
for kind in $kinds; do
	case $kind in single | steady) ;; *) die "PEER_BENCH_KINDS: $kind: want single and/or steady" ;; esac
done
kinds_csv=$(echo "$kinds" | tr -s ' ' ',')
# provebench's benchmarks read the same fraction (gpu/internal/benchenv).
export PROVEBENCH_BENCH_BIT_FRACTION="$fraction"
want() { case " $kinds " in *" $1 "*) return 0 ;; esac; return 1; }

binary() {
	case $1 in
	provebench-cuda) echo "$bin/cuda.test" ;;
	provebench-cpu) echo "$bin/cpu.test" ;;
	gnark-icicle) echo "$bin/peer-gnark-cuda" ;;
	gnark-cpu) echo "$bin/peer-gnark" ;;
	*) die "unknown prover $1 (want provebench-cuda, gnark-icicle, provebench-cpu, gnark-cpu)" ;;
	esac
}

provers=${PEER_BENCH_PROVERS:-}
if [ -z "$provers" ]; then
	for p in provebench-cuda gnark-icicle provebench-cpu gnark-cpu; do
		[ -x "$(binary $p)" ] && provers="$provers $p"
	done
	[ -n "$provers" ] || die "no prover binaries in $bin: run make peer-bench-bin (CUDA=1 for the CUDA ones)"
fi
for p in $provers; do
	[ -x "$(binary "$p")" ] || die "$(binary "$p") is missing: run make peer-bench-bin (CUDA=1 for the CUDA ones)"
done

# ICICLE's CUDA backend and front end, as make cuda-env sets them.
case " $provers " in *" provebench-cuda "* | *" gnark-icicle "*)
	: "${ICICLE_BACKEND_INSTALL_DIR:=$PWD/.device/icicle-cuda}"
	export ICICLE_BACKEND_INSTALL_DIR
	LD_LIBRARY_PATH="$ICICLE_BACKEND_INSTALL_DIR:$PWD/.icicle/install/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export LD_LIBRARY_PATH
	;;
esac
# gnark's ICICLE prover logs its MSM and NTT times with this set.
export ICICLE_STEP_PROFILE=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "goos: $(uname -s | tr '[:upper:]' '[:lower:]')"
echo "goarch: $(uname -m | sed 's/x86_64/amd64/; s/aarch64/arm64/')"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
echo "cores: $(nproc 2>/dev/null || echo unknown)"
if command -v nvidia-smi >/dev/null 2>&1; then
	echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
fi
echo "pkg: github.com/provebench/provebench/scripts/peer"
# Settings that change what is measured, as configuration lines.
echo "bit-fraction: $fraction"
# CUDA_LAUNCH_BLOCKING=1 makes every kernel launch wait for the kernel.
if [ "${CUDA_LAUNCH_BLOCKING:-0}" = 1 ]; then echo "cuda-launch-blocking: on"; fi

# gotest PROVER SIZE BENCH KIND: a provebench benchmark binary's lines,
# renamed BenchmarkPeer/PROVER/2^SIZE/KIND, ns/op and ms/partition per
# partition first, then the benchmark's other metrics.
gotest() {
	out=$tmp/$1-$2-$4.txt
	PROVEBENCH_BENCH_LOG=$2 "$(binary "$1")" -test.run '^$' -test.bench "$3" \
		-test.benchtime 1x -test.count "$count" -test.timeout 0 >"$out" 2>&1 ||
		{ cat "$out" >&2; die "$(binary "$1") failed"; }
	commit=$(sed -n 's/.*benchmark binary built from commit \([^ ]*\).*/\1/p' "$out" | head -1)
	echo "commit: ${commit:-unknown}"
	awk -v name="BenchmarkPeer/$1/2^$2/$4" '
		/^Benchmark/ {
			ms = ""
			for (i = 3; i < NF; i += 2) {
				if ($(i+1) == "ms/partition") ms = $i
				if ($(i+1) == "ns/op") ns = $i
			}
			# ns/op per partition, as ms/partition (a steady-state
			# benchmark op is a batch of partitions).
			if (ms == "") ms = sprintf("%.3f", ns / 1e6)
			line = name " " $2 " " sprintf("%.0f", ms * 1e6) " ns/op " ms " ms/partition"
			for (i = 3; i < NF; i += 2)
				if ($(i+1) != "ns/op" && $(i+1) != "ms/partition") line = line " " $i " " $(i+1)
			print line
		}' "$out"
}

# peer PROVER SIZE: the gnark peer's own benchmark lines.
peer() {
	out=$tmp/$1-$2.txt
	"$(binary "$1")" --constraints "2^$2" --bit-fraction "$fraction" --bench "$count" --partitions "$parts" --proofs 1 \
		--key "$key" --bench-kinds "$kinds_csv" >"$out" 2>&1 || { cat "$out" >&2; die "$(binary "$1") failed"; }
	echo "commit: $("$(binary "$1")" --version | sed -n 's/.* commit \([^ ]*\).*/\1/p')"
	grep '^BenchmarkPeer/' "$out"
}

for k in $sizes; do
	for p in $provers; do
		echo "prover: $p"
		case $p in
		provebench-cuda)
			if want single; then gotest "$p" "$k" '^BenchmarkProve$' single; fi
			if want steady; then gotest "$p" "$k" '^BenchmarkSteadyState$/^2\^'"$k"'$/^pinned-dataset$' steady; fi
			;;
		provebench-cpu)
			if want single; then gotest "$p" "$k" '^BenchmarkProve$' single; fi
			if want steady; then gotest "$p" "$k" '^BenchmarkSteadyState$' steady; fi
			;;
		*) peer "$p" "$k" ;;
		esac
	done
done
