#!/usr/bin/env bash
# scripts/bias/between.sh: issue 43's step between the first and second
# device calls of one lease (docs/results/h200-frozen26/README.md), on the
# machine with Go and git, fast enough that the lent machine is still warm
# for the next call (it lapses about 30 s after a call):
#
#   scripts/bias/between.sh FILES
#
# FILES is the folder the first call's packs came back in: cal.tar.gz
# (scripts/bias/h200.sh validate of scenarios/frozen-h200-cal.yaml) and
# g26.tar.gz (scripts/gate/h200.sh identical-big26, one run). It puts the
# gate run into docs/results/h200-gate/big26-COMMIT (COMMIT: the binary's,
# from the calibration's version.txt) and the calibration into
# docs/results/h200-frozen26/calibration/cal23, makes both frozen
# predictions (scenarios/frozen-h200-26.yaml and frozen-h200-25.yaml) from
# those documents alone with scripts/bias/predict.sh, and commits them (and
# nothing else: whatever else is staged stays staged), so that they are
# committed before the runs they predict. When a step fails nothing is
# committed and what it wrote into docs/results is removed again, so that
# it can run again at once (the packs in FILES are kept).
set -euo pipefail
files=${1:?usage: scripts/bias/between.sh FILES (the folder of cal.tar.gz and g26.tar.gz)}
files=$(cd "$files" && pwd) # FILES as given from where it was called
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
tar -xzf "$files/cal.tar.gz" -C "$tmp"
tar -xzf "$files/g26.tar.gz" -C "$tmp"
commit=$(sed -n 's/^commit \([0-9a-f]\{7\}\).*/\1/p' "$tmp/cal/version.txt" | head -1)
[ -n "$commit" ] || { echo "scripts/bias/between.sh: $tmp/cal/version.txt names no commit" >&2; exit 2; }
gate=docs/results/h200-gate/big26-$commit
cal=docs/results/h200-frozen26/calibration/cal23
paths=("$gate/identical-big26-1" "$gate/identical-big26-1.log" "$cal" docs/results/h200-frozen26/prediction docs/results/h200-frozen25/prediction)
for p in "${paths[@]}"; do
	[ ! -e "$p" ] || { echo "scripts/bias/between.sh: $p exists already" >&2; exit 2; }
done
mkdir -p "$gate" "$(dirname "$cal")" docs/results/h200-frozen25
wrote=("${paths[@]}")
cp -a "$tmp/g26/identical-big26-1" "$tmp/g26/identical-big26-1.log" "$gate/"
cp -a "$tmp/cal/runs" "$cal"
for f in env.txt version.txt cuda-sync.txt runs.log runs.host.log; do
	if [ -f "$tmp/cal/$f" ]; then cp "$tmp/cal/$f" "$cal/"; fi
done
docs=$cal/results.json.gz,$gate/identical-big26-1/base/results.json.gz,$gate/identical-big26-1/new/results.json.gz
for size in 26 25; do
	DIR=docs/results/h200-frozen$size FILE=scenarios/frozen-h200-$size.yaml CAL=$docs \
		ISSUE="issue 43, the frozen test at 2^$size" scripts/bias/predict.sh predict |
		sed -n '/^configuration/,/^$/p'
done
git add -- "${paths[@]}"
git commit -q -m "issue 43's frozen tests at 2^26 and 2^25: the calibration measured on the lent H200 they run on (frozen-h200-cal at 2^23, the gate's big26 at 2^26, binary $commit) and both predictions, committed before their runs (scripts/bias/between.sh)" -- "${paths[@]}"
committed=yes
git log -1 --format='committed %h at %ci'
