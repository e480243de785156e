#!/usr/bin/env bash
# scripts/stress/flaky.sh: run the tests whose synchronisation issue 32
# changed (sleeps replaced by observable events, synctest's clock, bounds
# with margins) ROUNDS times each while LOOPS busy loops compete for the
# CPUs, and count each test's passes and failures. The committed result is
# docs/results/flaky/ (README.md says how it was made).
#
#   scripts/stress/flaky.sh                 # 20 rounds, 4 busy loops, into out/stress
#   ROUNDS=5 LOOPS=8 OUT=/tmp/s scripts/stress/flaky.sh
#   ONLY="run cmd" scripts/stress/flaky.sh  # some suites only
#
# Each suite is one go test -count=ROUNDS (a test runs ROUNDS times in one
# test binary, one after the other). Exit status 1 when any test failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-20}
LOOPS=${LOOPS:-4}
OUT=${OUT:-out/stress}
mkdir -p "$OUT"

# name | go test flags | packages | -run pattern
SUITES=(
	"pipeline-race|-race|./pipeline/|."
	"groth16||./gpu/groth16/|."
	"sample||./run/sample/|."
	"run||./run/|^(TestExec|TestRunRecordsEveryRepetition|TestWarmAndColdStart|TestFailuresFailTheirProofOnly|TestReuse|TestServe|TestInterleavedInterrupt|TestInterruptKeeps)"
	"cmd||./cmd/provebench/|^(TestSimulateExitsAtSIGINT|TestSimulateInterrupted|TestPreflightRefusesPoRepSize|TestScenarioErrorsStartWithTheFile|TestSecondInterrupt|TestRunWithTimeout|TestRunRefusesExecPaths|TestExecProvebenchMatchesInProcess)"
)

busy=()
stop_busy() { if ((${#busy[@]})); then kill "${busy[@]}" 2>/dev/null || true; fi; }
trap stop_busy EXIT
for _ in $(seq "$LOOPS"); do
	(while :; do :; done) &
	busy+=($!)
done

summary=$OUT/summary.txt
{
	echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!out' || echo '+dirty')"
	echo "date $(date -u +%FT%TZ), $(nproc) CPUs, $LOOPS busy loops, $ROUNDS rounds, $(go version | cut -d' ' -f3)"
} >"$summary"
failed=0
for s in "${SUITES[@]}"; do
	IFS='|' read -r name flags pkgs pattern <<<"$s"
	if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then
		continue
	fi
	start=$(date +%s)
	load0=$(cut -d' ' -f1 /proc/loadavg)
	# shellcheck disable=SC2086
	go test -json -count="$ROUNDS" -timeout 90m $flags -run "$pattern" $pkgs >"$OUT/$name.json" 2>"$OUT/$name.stderr" || true
	load1=$(cut -d' ' -f1 /proc/loadavg)
	pass=$(grep -c '"Action":"pass","Package":"[^"]*","Test":"[^"/]*","Elapsed"' "$OUT/$name.json" || true)
	fail=$(grep -c '"Action":"fail","Package":"[^"]*","Test":"[^"/]*","Elapsed"' "$OUT/$name.json" || true)
	tests=$(grep -o '"Action":"pass","Package":"[^"]*","Test":"[^"/]*"' "$OUT/$name.json" | sort -u | wc -l)
	pkgfail=$(grep -c '"Action":"fail","Package":"[^"]*","Elapsed"' "$OUT/$name.json" || true)
	printf '%-14s %3d tests x %d rounds: %5d passed, %d failed (package failures %d), %4d s, load %s -> %s\n' \
		"$name" "$tests" "$ROUNDS" "$pass" "$fail" "$pkgfail" "$(($(date +%s) - start))" "$load0" "$load1" | tee -a "$summary"
	if ((fail > 0 || pkgfail > 0 || pass == 0)); then
		failed=1
		grep -o '"Action":"fail","Package":"[^"]*","Test":"[^"]*"' "$OUT/$name.json" | sort | uniq -c | sed 's/^/    /' | tee -a "$summary"
	fi
done
exit $failed
