#!/usr/bin/env bash
# scripts/bias/between.sh: issue 43's step between the calibrating calls
# and the frozen tests' calls of one lease
# (docs/results/h200-frozen26/README.md), on the machine with Go and git,
# fast enough that the lent machine is still warm for the next call (it
# lapses about 30 s after a call):
#
#   scripts/bias/between.sh FILES...
#
# FILES are the folders the calls' packs came back in, one or several:
# between them cal.tar.gz (scripts/bias/h200.sh validate of
# scenarios/frozen-h200-cal.yaml) and g26.tar.gz (scripts/gate/h200.sh
# identical-big26, one run). It puts the
# gate run into docs/results/h200-gate/big26-COMMIT (COMMIT: the binary's,
# from the calibration's version.txt) and the calibration into
# docs/results/h200-frozen26/calibration/cal23, makes both frozen
# predictions (scenarios/frozen-h200-26.yaml and frozen-h200-24.yaml) from
# those documents alone with scripts/bias/predict.sh, and commits them (and
# nothing else: whatever else is staged stays staged), so that they are
# committed before the runs they predict. When a step fails nothing is
# committed and what it wrote into docs/results is removed again, so that
# it can run again at once (the packs in FILES are kept).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: scripts/bias/between.sh FILES... (the folders of cal.tar.gz and g26.tar.gz)" >&2; exit 2; }
# pack is the one file of that name in FILES, as a path from here.
pack() {
	local found=() d
	for d in "${folders[@]}"; do
		if [ -f "$d/$1" ]; then found+=("$d/$1"); fi
	done
	[ ${#found[@]} -eq 1 ] || { echo "scripts/bias/between.sh: ${#found[@]} files named $1 in ${folders[*]}, want one" >&2; exit 2; }
	echo "${found[0]}"
}
folders=()
for d in "$@"; do folders+=("$(cd "$d" && pwd)"); done # FILES as given from where it was called
calpack=$(pack cal.tar.gz)
gatepack=$(pack g26.tar.gz)
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
# wrote are the paths this run made in docs/results, removed unless
# committed.
wrote=()
committed=
cleanup() {
	rm -rf "$tmp"
	if [ -z "$committed" ] && [ ${#wrote[@]} -gt 0 ]; then
		git reset -q -- "${wrote[@]}" 2>/dev/null || true
		rm -rf "${wrote[@]}"
		echo "scripts/bias/between.sh: failed; nothing committed, ${wrote[*]} removed" >&2
	fi
}
trap cleanup EXIT
tar -xzf "$calpack" -C "$tmp"
tar -xzf "$gatepack" -C "$tmp"
# The calibration's two sizes come from two calls: they must be one
# machine's, as the tests' runs will be (same-gpu checks those against
# cal23's env.txt), or the laws fit two machines' difference.
calgpu=$(grep -o 'GPU-[0-9a-f-]*' "$tmp/cal/env.txt" | head -1 || true)
gategpu=$(zcat -f "$tmp/g26/identical-big26-1/base/results.json.gz" | jq -r '.environment.gpus[0].uuid // empty' || true)
[ -n "$calgpu" ] && [ "$calgpu" = "$gategpu" ] || {
	echo "scripts/bias/between.sh: the calibration ran on ${calgpu:-no GPU named}, the gate run on ${gategpu:-no GPU named}: not one machine, nothing written (make both calls again on one)" >&2
	exit 2
}
commit=$(sed -n 's/^commit \([0-9a-f]\{7\}\).*/\1/p' "$tmp/cal/version.txt" | head -1)
[ -n "$commit" ] || { echo "scripts/bias/between.sh: $tmp/cal/version.txt names no commit" >&2; exit 2; }
gate=docs/results/h200-gate/big26-$commit
cal=docs/results/h200-frozen26/calibration/cal23
paths=("$gate/identical-big26-1" "$gate/identical-big26-1.log" "$cal" docs/results/h200-frozen26/prediction docs/results/h200-frozen24/prediction)
for p in "${paths[@]}"; do
	[ ! -e "$p" ] || { echo "scripts/bias/between.sh: $p exists already" >&2; exit 2; }
done
mkdir -p "$gate" "$(dirname "$cal")" docs/results/h200-frozen24
wrote=("${paths[@]}")
cp -a "$tmp/g26/identical-big26-1" "$tmp/g26/identical-big26-1.log" "$gate/"
cp -a "$tmp/cal/runs" "$cal"
for f in env.txt version.txt cuda-sync.txt runs.log runs.host.log; do
	if [ -f "$tmp/cal/$f" ]; then cp "$tmp/cal/$f" "$cal/"; fi
done
docs=$cal/results.json.gz,$gate/identical-big26-1/base/results.json.gz,$gate/identical-big26-1/new/results.json.gz
for size in 26 24; do
	DIR=docs/results/h200-frozen$size FILE=scenarios/frozen-h200-$size.yaml CAL=$docs \
		ISSUE="issue 43, the frozen test at 2^$size" scripts/bias/predict.sh predict |
		sed -n '/^configuration/,/^$/p'
done
git add -- "${paths[@]}"
git commit -q -m "issue 43's frozen tests at 2^26 and 2^24: the calibration measured on the lent H200 they run on (frozen-h200-cal at 2^23, the gate's big26 at 2^26, binary $commit) and both predictions, committed before their runs (scripts/bias/between.sh)" -- "${paths[@]}"
committed=yes
git log -1 --format='committed %h at %ci'
