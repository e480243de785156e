#!/usr/bin/env bash
# How good is ab --until-resolved's "about N more pairs" (issue 39 item 3)?
# For every committed ab log under docs/results (h200-gate, gate-check-2core:
# wherever the folder of the run is kept beside its log) that printed
# "NAME: not resolved after P pairs: about N more wanted", judge the run's
# own documents again as ab would have after P+2, P+4, ... pairs
# (provebench compare --paired DIR --first-pairs K, under the rules those
# runs had: --host-clock-unjudged inconclusive) and print the pairs it
# really took to reach a verdict (0 or 3), or "not by T" when the run's T
# pairs never did. "estimate" is what the run printed; "now" is this
# binary's estimate from the same pairs (the most any metric asks for).
#
# Usage: scripts/copies/estimates.sh [BIN]   (default bin/provebench)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-bin/provebench}
printf '%-52s %-8s %9s %9s %9s %s\n' "run" "config" "estimate" "now" "needed" "verdict then"
grep -rl 'more wanted' docs/results --include='*.log' --include='*.txt' | sort | while read -r log; do
	dir=${log%.log}
	dir=${dir%.txt}
	[ -d "$dir/base" ] && [ -d "$dir/new" ] || continue
	{ grep -E '^[^ ]+: not resolved after [0-9]+ pairs: about [0-9]+ more wanted' "$log" | head -1 || true; } |
		while read -r name _ _ _ p0 _ _ est _; do
			name=${name%:}
			total=$(grep -oE "^$name pair [0-9]+" "$log" | awk '{print $3}' | sort -n | tail -1)
			needed="not by $total" verdict=""
			# This binary's own estimate after the same pairs.
			now=$("$BIN" compare --paired "$dir" --first-pairs "$p0" --host-clock-unjudged inconclusive 2>/dev/null | grep -oE 'about [0-9]+ more pairs' | awk '{print $2}' | sort -n | tail -1 || true)
			for k in $(seq $((p0 + 2)) 2 "$total"); do
				rc=0
				out=$("$BIN" compare --paired "$dir" --first-pairs "$k" --host-clock-unjudged inconclusive 2>/dev/null) || rc=$?
				if [ "$rc" = 0 ] || [ "$rc" = 3 ]; then
					needed=$((k - p0))
					verdict=${out%%$'\n'*}
					verdict=${verdict#provebench ab: }
					verdict=${verdict%%:*}
					break
				fi
			done
			printf '%-52s %-8s %9s %9s %9s %s\n' "$dir" "$name" "$est" "${now:--}" "$needed" "$verdict"
		done
done
