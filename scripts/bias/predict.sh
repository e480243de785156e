#!/usr/bin/env bash
# scripts/bias/predict.sh: issue 33 item 4's frozen prediction and its
# check, on the machine with Go and git, between and after the GPU calls of
# scripts/bias/h200.sh (docs/results/h200-porep/README.md, "The next run
# for item 4"). $DIR holds the experiment: calibration/ (call A's run
# folder), prediction/ (written here), runs/ (call B's run folder),
# check.md (written here).
#
#   predict  provebench simulate of $FILE calibrated on calibration/ alone,
#            into prediction/, with a README.md that records the command,
#            the binary, the source's commit (commit.txt) and the
#            calibration's, and the fitted model (explain.log). Refused
#            (exit 2, nothing written) when a results document other than
#            the calibration's is in $DIR already, or a prediction is: one
#            made after its runs exist is not frozen. Refused (exit 1) when
#            simulate says it assumed every exponent 1 (one size
#            calibrated). Commit it before call B.
#   check    the committed prediction against runs/: simulate --check's
#            table (stages, s/proof, peak RSS, from the model calibrated
#            again) and scripts/frozen's (partitions/s and peak RSS of the
#            committed prediction, |error| p90 against 10%), into check.md.
#            Refused (exit 2) when the prediction is not committed as it is,
#            or the runs began before its commit. Exit 3 when a target is
#            missed, 4 when no configuration ran.
#
# Environment: DIR (default docs/results/h200-bias), FILE (the scenario
# file predicted, default scenarios/bias-h200.yaml), CAL (the calibration:
# documents separated by commas, such as the committed
# docs/results/h200-validation set, instead of $DIR/calibration), ISSUE
# (what the documents name, default "issue 33 item 4"), BIN (default
# bin/provebench: make build). DIR may be outside this repository in a git
# repository of its own (a rehearsal's: scripts/bias/rehearse.sh). Needs
# jq, and Go for check.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
DIR=${DIR:-docs/results/h200-bias}
FILE=${FILE:-scenarios/bias-h200.yaml}
BIN=${BIN:-bin/provebench}
CAL=${CAL:-}
ISSUE=${ISSUE:-issue 33 item 4}
TARGET=10%

die() { # status message...
	local status=$1
	shift
	echo "scripts/bias/predict.sh: $*" >&2
	exit "$status"
}

# TMP is the step's scratch folder, removed on exit.
TMP=
trap '[ -z "$TMP" ] || rm -rf "$TMP"' EXIT

# document prints the results document of a run folder, or nothing.
document() {
	local f
	for f in "$1/results.json.gz" "$1/results.json"; do
		[ -f "$f" ] && { echo "$f"; return; }
	done
}

# calibration prints the calibration: $CAL, else $DIR/calibration's
# document.
calibration() {
	if [ -n "$CAL" ]; then echo "$CAL"; else document "$DIR/calibration"; fi
}

# about prints a document's tool version, host and start (the first's,
# of documents separated by commas).
about() {
	zcat -f "${1%%,*}" | jq -r '.environment as $e | ([$e.cpu_model] + ($e.gpus // [] | map(.name)) | join(", ")) as $hw |
		"\(.tool_version) on \($e.hostname) (\($hw)), started \(.started_at)"'
}

# summary prints a run's or a simulation's table: a line per configuration.
summary() { sed -n '/^configuration  *ok\/runs/,/^(medians/p' "$1"; }

predict() {
	local other cal out status
	other=$(find "$DIR" -path "$DIR/calibration" -prune -o -path "$DIR/prediction*" -prune -o \( -name results.json.gz -o -name results.json \) -print 2>/dev/null | head -1)
	[ -z "$other" ] || die 2 "$other exists: a prediction made now would not be frozen before the runs it predicts (the order is the point)"
	[ ! -e "$DIR/prediction" ] || die 2 "$DIR/prediction exists: a frozen prediction is made once (remove it first only if it was never committed)"
	cal=$(calibration)
	[ -n "$cal" ] || die 2 "$DIR/calibration: no results document (call A's run folder goes there, or CAL names the documents)"
	[ -x "$BIN" ] || die 2 "no binary $BIN (make build)"
	command -v jq >/dev/null || die 2 "jq is needed to read the documents' versions"

	TMP=$(mktemp -d "$DIR/.prediction.XXXXXX") || die 2 "cannot write into $DIR"
	out=$TMP/prediction
	echo "\$ $BIN simulate $FILE --calibration $cal --no-report -o $DIR/prediction" >"$TMP/prediction.log"
	"$BIN" simulate "$FILE" --calibration "$cal" --no-report -o "$out" >>"$TMP/prediction.log" 2>&1
	status=$?
	sed "s|$out|$DIR/prediction|g" "$TMP/prediction.log"
	[ "$status" -eq 0 ] || die "$status" "simulate failed (exit $status): nothing written"
	grep -q "every cost law's exponent is assumed 1" "$TMP/prediction.log" &&
		die 1 "the calibration measured one size: a prediction at another would rest on exponents assumed 1; nothing written"
	sed "s|$out|$DIR/prediction|g" "$TMP/prediction.log" >"$out/prediction.log"
	echo "\$ $BIN simulate $FILE --calibration $cal --explain --no-report -o /tmp/explain" >"$out/explain.log"
	"$BIN" simulate "$FILE" --calibration "$cal" --explain --no-report -o "$TMP/explain" >>"$out/explain.log" 2>&1 ||
		die 1 "simulate --explain failed: nothing written"
	sed -i "s|$TMP|/tmp|g" "$out/explain.log"
	git -C "$ROOT" rev-parse HEAD >"$out/commit.txt" || die 1 "$ROOT: no git commit to record"
	readme "$cal" "$out" >"$out/README.md"
	mv "$out" "$DIR/prediction" || die 1 "cannot move the prediction into $DIR"
	echo
	echo "wrote $DIR/prediction: commit it, and calibration/, before call B runs"
}

# readme is the prediction's README: what it is, from what, by which
# command, what it predicts and what the model cannot know.
readme() { # calibration-document prediction-folder
	local cal=$1 out=$2 commit dirty=""
	commit=$(cat "$out/commit.txt")
	git -C "$ROOT" diff --quiet HEAD -- predict sim pipeline spec ||
		dirty=" (with uncommitted changes to predict, sim, pipeline or spec)"
	cat <<EOF
# The frozen prediction of \`$FILE\` ($ISSUE)

Made by \`scripts/bias/predict.sh predict\` before any run of \`$FILE\`
existed, calibrated only on $(if [ -n "$CAL" ]; then echo "the committed documents named below (CAL)"; else echo "call A's document (shapes at sizes below the
predicted ones, run in the session whose call B runs these)"; fi).

- simulating binary: \`$("$BIN" --version 2>&1 | head -2 | tr '\n' ' ')\`
- source: commit $commit$dirty (\`commit.txt\`); the check is this
  model's only where \`git diff ${commit:0:12} HEAD -- predict sim pipeline spec\`
  is empty
- calibration: \`$cal\`, $(about "$cal")

\`\`\`sh
$(head -1 "$out/prediction.log" | cut -c3-)
$(head -1 "$out/explain.log" | cut -c3-)   # explain.log
\`\`\`

## What it predicts

The simulator is deterministic: one predicted repetition per configuration.

\`\`\`
$(summary "$out/prediction.log")
\`\`\`

## What the model does not know (named before the runs)

- **Size.** Every law is fitted at the calibration's sizes and extrapolated
  to the predicted size (\`explain.log\`: the laws and their exponents);
  over a factor of 2 in size, a 3% error in one size's median moves a
  figure at 4 times the larger size by about 9%.
- **Synthesis side by side at the predicted size.** The contention is
  fitted where a dataset is a quarter or an eighth of the predicted one;
  partitions synthesizing at once there share the memory bandwidth with
  larger writes.
- **The host between the calls.** Call B starts a machine of its own
  minutes after call A; its host's speed is not the calibration's if the
  machine or its neighbours differ.

\`scripts/bias/predict.sh check\` judges it by call B's runs (\`check.md\`).
EOF
}

# committed refuses to judge a prediction that is not committed as it is.
committed() {
	if ! git -C "$DIR" ls-files --error-unmatch prediction/README.md >/dev/null 2>&1 ||
		! git -C "$DIR" diff --quiet HEAD -- prediction ||
		[ -n "$(git -C "$DIR" ls-files --others -- prediction)" ]; then
		die 2 "$DIR/prediction is not committed as it is: commit the prediction before the runs, and judge what was committed"
	fi
}

# after_commit refuses runs that began before the prediction's commit
# (its first; to the second): the order is the point.
after_commit() { # runs-document
	local added started
	added=$(git -C "$DIR" log --diff-filter=A --format=%ct -- prediction/README.md | tail -1)
	started=$(date -d "$(zcat -f "$1" | jq -r .started_at)" +%s) || die 2 "$1: no start time"
	[ "$started" -ge "$added" ] ||
		die 2 "$1 began at $(date -u -d "@$started" +%FT%TZ), before the prediction was committed ($(date -u -d "@$added" +%FT%TZ)): not a frozen prediction"
}

# repredicts says whether the model at HEAD predicts a committed
# prediction's figures exactly, from the same calibration: whether an edit
# to the model's folders since (a comment, a message, a new column) left
# what it predicts alone. The figures compared are the ones scripts/frozen
# judges, and each repetition's outcome.
repredicts() { # calibration prediction-document
	local figures='[.scenarios[] | {name, r: [.repetitions[] | {status, partitions_per_second, seconds_per_proof, peak_rss_bytes}]}]'
	local again committed
	"$BIN" simulate "$FILE" --calibration "$1" --no-report -o "$TMP/again" >/dev/null 2>&1 || return 1
	# A document either side that cannot be read, or reads as no
	# configuration, is not the same figures (two empty strings would be).
	again=$(zcat -f "$TMP/again/results.json.gz" | jq -c "$figures") || return 1
	committed=$(zcat -f "$2" | jq -c "$figures") || return 1
	[ -n "$committed" ] && [ "$committed" != "[]" ] && [ "$again" = "$committed" ]
}

check() {
	local pred runs cal commit status
	pred=$(document "$DIR/prediction")
	runs=$(document "$DIR/runs")
	cal=$(calibration)
	[ -n "$pred" ] || die 2 "$DIR/prediction: no prediction (scripts/bias/predict.sh predict)"
	committed
	[ -n "$runs" ] || die 2 "$DIR/runs: no results document (call B's run folder goes there)"
	command -v jq >/dev/null || die 2 "jq is needed to read the runs' start"
	after_commit "$runs"
	commit=$(cat "$DIR/prediction/commit.txt")

	TMP=$(mktemp -d) || die 2 "no temporary folder"
	"$BIN" simulate "$FILE" --calibration "$cal" --check "$runs" --no-report -o "$TMP/check" >"$TMP/simulate.log" 2>&1 ||
		{ cat "$TMP/simulate.log"; die 1 "simulate --check failed: check.md not written"; }
	# Built, not `go run`: go run reports any exit of the program as 1,
	# and 3 (a target missed) is a verdict, not a failure.
	(cd "$ROOT" && go build -o "$TMP/frozen" ./scripts/frozen) || die 1 "cannot build scripts/frozen: check.md not written"
	"$TMP/frozen" -target "$TARGET" "$pred" "$runs" >"$TMP/frozen.log"
	status=$?
	case $status in 0 | 3 | 4) ;; *) die 1 "scripts/frozen failed (exit $status): check.md not written" ;; esac
	{
		echo "# The frozen prediction of \`$FILE\` judged by call B's runs ($ISSUE)"
		echo
		echo "- calibration: \`$cal\`, $(about "$cal")"
		echo "- runs: \`$runs\`, $(about "$runs")"
		if git -C "$ROOT" diff --quiet "$commit" HEAD -- predict sim pipeline spec; then
			echo "- model code unchanged since the prediction's commit ${commit:0:12} (\`git diff ${commit:0:12} HEAD -- predict sim pipeline spec\` is empty)"
		elif repredicts "$cal" "$pred"; then
			echo "- model code edited since the prediction's commit ${commit:0:12} ($(git -C "$ROOT" diff --shortstat "$commit" HEAD -- predict sim pipeline spec | sed 's/^ //')), and it predicts the committed figures exactly: simulated again at HEAD from the same calibration, partitions/s, s/proof, peak RSS and each repetition's outcome are the same"
		else
			echo "- **model code changed since the prediction's commit ${commit:0:12}**: simulate --check below is a later model's; the frozen figures are judged from the committed document (scripts/frozen)"
		fi
		echo
		echo '```'
		echo "\$ $BIN simulate $FILE --calibration $cal --check $runs --no-report -o /tmp/check"
		sed "s|$TMP|/tmp|g" "$TMP/simulate.log"
		echo '```'
		echo
		echo "\$ go run ./scripts/frozen -target $TARGET $pred $runs"
		echo
		cat "$TMP/frozen.log"
	} >"$TMP/check.md"
	mv "$TMP/check.md" "$DIR/check.md" || die 1 "cannot write $DIR/check.md"
	cat "$DIR/check.md"
	echo
	echo "wrote $DIR/check.md (scripts/frozen: exit $status; 0 within the targets, 3 missed, 4 nothing judged)"
	exit "$status"
}

[ $# -eq 1 ] || die 2 "usage: scripts/bias/predict.sh predict|check"
case $1 in
predict) predict ;;
check) check ;;
*) die 2 "unknown step $1 (predict, check)" ;;
esac
