# provebench: the two commands a new user needs are `make run` and `make test`.
#
#   make run     build, run the quickstart scenarios on the CPU backend, and
#                write results, report and plots into $(OUT)
#   make test    vet and test everything (the engine under the race detector),
#                then fuzz the scenario loader, results reader and key files
#                for a few seconds each
#
# GPU hosts: see docs/gpu.md (make icicle, make build-cuda, make run-cuda).

GO      ?= go
BIN     ?= bin/provebench
OUT     ?= out/quickstart
# -buildvcs=auto records the git commit in the binary when there is one
# (results.json reports it); it overrides a GOFLAGS=-buildvcs=false.
GOBUILD := $(GO) build -buildvcs=auto
# go-nvml's cgo wrappers call NVML functions the driver headers mark
# deprecated: without this, a first build prints ~145 lines of gcc warnings
# that say nothing about provebench. (-O2 -g is Go's default.)
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: all build run test test-short vet fmt fuzz bench bench-cpu check-snarkjs gate-check clean

all: build

build:
	$(GOBUILD) -o $(BIN) ./cmd/provebench

run: build
	$(BIN) run --backend cpu -o $(OUT)
	@echo "results, report and plots: $(OUT) (open $(OUT)/report.html)"

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt would change:"; gofmt -l .; exit 1; }

test: vet
	$(GO) test ./...
	$(GO) test -race ./pipeline/... ./bench/...
	$(MAKE) --no-print-directory fuzz

# Fuzz the decoders of untrusted input briefly (seed corpora in each
# package's testdata/fuzz; findings land there too, to commit as seeds).
# The budgets are counts of runs (a few seconds each): a duration budget
# trips Go 1.26's fuzzing coordinator at its deadline (golang/go#75804,
# "context deadline exceeded" with no failing input). make fuzz FUZZTIME=5m
# for a longer hunt. Minimizing a new input is capped: the key decoder's
# runs touch files, and minimizing would take the time.
FUZZ_TARGETS := FuzzLoad:./scenarios/:5000x FuzzDecode:./bench/results/:20000x FuzzLoadKey:./gpu/groth16/:1000x
FUZZTIME ?=
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		name=$${t%%:*}; rest=$${t#*:}; pkg=$${rest%%:*}; budget=$${rest#*:}; \
		if [ -n "$(FUZZTIME)" ]; then budget="$(FUZZTIME)"; fi; \
		echo "fuzz $$name ($$budget)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$budget -fuzzminimizetime 2s $$pkg; \
	done

# Go benchmarks of the CPU prover's stages and the raw gnark-crypto calls
# (the 1.15x target). PROVEBENCH_BENCH_LOG=12,14,16,18 picks the sizes.
bench-cpu:
	$(GO) test ./gpu/cpu/ -run '^$$' -bench 'Prove|Raw' -benchtime 3x
	$(GO) test ./gpu/circuit/ -run '^$$' -bench Synthesize -benchtime 3x

bench: bench-cpu

# How the ab gate behaves on this machine: false alarms over identical sides,
# detections of a ~15% slowdown, with a CPU hog switched on and off, and the
# time of one ab of scenarios/ci.yaml (about 15 minutes on 2 cores).
gate-check:
	scripts/gatecheck/run.sh

# Verify an exported proof with snarkjs, an independent verifier (needs npm).
SNARKJS_DIR ?= .snarkjs
check-snarkjs:
	@test -x $(SNARKJS_DIR)/node_modules/.bin/snarkjs || npm install --prefix $(SNARKJS_DIR) --no-audit --no-fund snarkjs@0.7.6
	PROVEBENCH_SNARKJS=$(abspath $(SNARKJS_DIR))/node_modules/.bin/snarkjs $(GO) test ./gpu/groth16/ -run SnarkJS -v

clean:
	rm -rf bin out

-include mk/cuda.mk
-include mk/peer.mk
