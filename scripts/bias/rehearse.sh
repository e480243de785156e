#!/usr/bin/env bash
# scripts/bias/rehearse.sh: issue 33 item 4's procedure end to end on this
# machine's CPU, before a GPU session spends its minutes on it. The two
# scenario files are copied into a folder with every size 2^10 smaller
# (2^21 -> 2^11, 2^22 -> 2^12, 2^24 -> 2^14; the budget's GiB -> MiB, so
# that it holds the same 3 datasets), and the session's steps run on the
# CPU backend: scripts/bias/h200.sh calibrate, scripts/bias/predict.sh
# predict (then check, refused: nothing committed yet), a commit,
# scripts/bias/h200.sh validate, predict.sh predict again (refused: the
# runs exist), predict.sh check. The results folder is a git repository of
# its own there: nothing enters this one, since the figures are a shared
# 2-core machine's at toy sizes, not the H200's.
#
#   scripts/bias/rehearse.sh [FOLDER]    # default: a new temporary folder, kept
#
# PREDICTED names the predicted file (default bias-h200; bias-h200-r3 for
# the third test), CALIBRATION the calibration's (default bias-h200-cal;
# bias-h200-cal-r4 for the fourth), CALIBRATE call A's steps (default
# calibrate; "pretouch calibrate" for the fourth) and VALIDATE call B's
# (default validate; validate-interleaved for the third, "pretouch
# validate-interleaved anchor" for the fourth). pretouch writes
# PRETOUCH_GIB GiB (here 1 unless set).
#
# Exit 0 when every step did what the session expects of it (check's own
# verdict on these toy runs aside: 0 or 3), 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
W=${1:-$(mktemp -d /tmp/bias-rehearsal.XXXXXX)}
BIN=$ROOT/bin/provebench
PREDICTED=${PREDICTED:-bias-h200}
CALIBRATION=${CALIBRATION:-bias-h200-cal}
CALIBRATE=${CALIBRATE:-calibrate}
VALIDATE=${VALIDATE:-validate}
export PRETOUCH_GIB=${PRETOUCH_GIB:-1}
failed=0

expect() { # want-status got-status what
	if [ "$2" -eq "$1" ]; then
		echo "rehearsal: $3: exit $2, as expected"
	else
		echo "rehearsal: $3: exit $2, want $1" >&2
		failed=1
	fi
}

make -s build || exit 1
mkdir -p "$W/out" "$W/results" || exit 1
for f in "$CALIBRATION" "$PREDICTED"; do
	sed -E -e 's/2\^2([0-9])/2^1\1/g' -e '/budget:/s/GiB/MiB/' "scenarios/$f.yaml" >"$W/$f.yaml"
	# Every size in the settings moved down: none of the H200's is left.
	if grep -v '^ *#' "$W/$f.yaml" | grep -q '2^2[0-9]'; then
		echo "rehearsal: $W/$f.yaml still has a 2^2x size" >&2
		exit 1
	fi
done
"$BIN" validate "$W/$CALIBRATION.yaml" "$W/$PREDICTED.yaml" >/dev/null || exit 1
git -C "$W/results" init -q || exit 1
commit() { git -C "$W/results" -c user.name=rehearsal -c user.email=rehearsal@localhost commit -q -m "$1"; }

export BIN BACKEND=cpu CAL_FILE=$W/$CALIBRATION.yaml FILE=$W/$PREDICTED.yaml DIR=$W/results
# shellcheck disable=SC2086 # the steps are words
RESULTS=$W/out/a scripts/bias/h200.sh $CALIBRATE
expect 0 $? "h200.sh $CALIBRATE (call A)"
cp -r "$W/out/a/calibration" "$DIR/calibration"

scripts/bias/predict.sh predict
expect 0 $? "predict.sh predict"
scripts/bias/predict.sh check 2>&1 | tail -1
expect 2 "${PIPESTATUS[0]}" "predict.sh check before the prediction is committed"
git -C "$DIR" add calibration prediction && commit "the frozen prediction"

# shellcheck disable=SC2086 # the steps are words
RESULTS=$W/out/b scripts/bias/h200.sh $VALIDATE
expect 0 $? "h200.sh $VALIDATE (call B)"
cp -r "$W/out/b/runs" "$DIR/runs"

mv "$DIR/prediction" "$W/prediction.kept"
scripts/bias/predict.sh predict 2>&1 | tail -1
expect 2 "${PIPESTATUS[0]}" "predict.sh predict once the runs exist"
[ ! -e "$DIR/prediction" ] || { echo "rehearsal: a refused prediction left $DIR/prediction" >&2; failed=1; }
mv "$W/prediction.kept" "$DIR/prediction"

scripts/bias/predict.sh check
status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 3 ] || expect 0 "$status" "predict.sh check"
[ -s "$DIR/check.md" ] || { echo "rehearsal: no $DIR/check.md" >&2; failed=1; }
echo "rehearsal: everything under $W"
[ "$failed" -eq 0 ] && echo "rehearsal: ok" || echo "rehearsal: FAILED" >&2
exit "$failed"
