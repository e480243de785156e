# mk/peer.mk: peer provers, programs nobody here wrote the prover of, for the
# exec driver and the side-by-side benchmarks (docs/peer.md). Each lives in
# its own Go module under peers/, so its dependencies stay out of
# provebench's go.mod. Included by the root Makefile after mk/cuda.mk,
# whose ICICLE front end and rpath the CUDA builds share.
#
# Here (any host with Go):
#   peer-gnark        bin/peer-gnark: gnark's Groth16 on the CPU
#   peer-gnark-cuda   bin/peer-gnark-cuda: gnark's ICICLE Groth16 (-tags
#                     icicle), linked against $(ICICLE_LIB) as
#                     provebench-cuda is (make icicle builds it if missing)
#   peer-bench-bin    every binary scripts/peer/bench.sh runs: the four
#                     provers' binaries and the provebench benchmark test
#                     binaries (bin/cpu.test; bin/cuda.test with CUDA=1)
#   test-peer         the peer module's vet and tests, with bin/peer-gnark
#                     and bin/provebench built first (make test runs it
#                     where bin/peer-gnark is built: mk/test.mk)
#   test-peer-icicle  its ICICLE build's vet and test, on ICICLE's CPU device
#                     (PEER_GNARK_ICICLE_DEVICE=CUDA on a GPU host); the test
#                     skips below three hardware threads, where the CPU
#                     device aborts
# Anywhere, without Go (the binaries and .icicle/, .device/ carried):
#   peer-bench        scripts/peer/bench.sh, Go benchmark lines on stdout

_peer_mk_default_goal := $(.DEFAULT_GOAL)

GO ?= go
PEER_GNARK_DIR := peers/gnark
PEER_GNARK_BIN ?= bin/peer-gnark
PEER_GNARK_CUDA_BIN ?= bin/peer-gnark-cuda
CPU_TEST_BIN ?= bin/cpu.test

.PHONY: peer-gnark peer-gnark-cuda peer-bench-bin peer-bench test-peer test-peer-icicle

# go build runs in the peer's module. The commit goes in through the
# linker (BENCH_REVISION, mk/cuda.mk), "-dirty" with uncommitted changes.
PEER_LDFLAGS = -ldflags '-X main.buildRevision=$(BENCH_REVISION)'

peer-gnark:
	cd $(PEER_GNARK_DIR) && $(GO) build $(PEER_LDFLAGS) -o $(CURDIR)/$(PEER_GNARK_BIN) .

# gnark's ICICLE prover for BLS12-381 on icicle-gnark v3.2.2, the version
# provebench pins: the same front end ($(ICICLE_LIB)) and CUDA backend
# ($(ICICLE_CUDA_DIR)) serve both binaries.
peer-gnark-cuda: icicle
	cd $(PEER_GNARK_DIR) && $(CUDA_GO_ENV) $(GO) build $(PEER_LDFLAGS) -tags icicle -o $(CURDIR)/$(PEER_GNARK_CUDA_BIN) .

$(CPU_TEST_BIN):
	$(GO) test -c -ldflags '-X github.com/provebench/provebench/gpu/internal/benchenv.Revision=$(BENCH_REVISION)' \
		-o $(CPU_TEST_BIN) ./gpu/cpu

# CUDA=1 adds the CUDA binaries (front end from make icicle).
peer-bench-bin: build peer-gnark
	$(MAKE) --no-print-directory -B $(CPU_TEST_BIN)
	$(if $(CUDA),$(MAKE) --no-print-directory build-cuda bench-cuda-bin peer-gnark-cuda)

peer-bench:
	scripts/peer/bench.sh

test-peer: build peer-gnark $(GOTEST_DEPS)
	cd $(PEER_GNARK_DIR) && $(GO) vet . && $(call gotest,peer,-count=1 .)

# The test binary runs from a temporary folder, where the rpath relative
# to bin/ does not reach: LD_LIBRARY_PATH does.
test-peer-icicle: icicle $(GOTEST_DEPS)
	cd $(PEER_GNARK_DIR) && $(CUDA_GO_ENV) $(GO) vet -tags icicle . && \
		$(CUDA_GO_ENV) PEER_GNARK_ICICLE_TEST=1 ICICLE_STEP_PROFILE=1 LD_LIBRARY_PATH='$(ICICLE_LIB)' \
		$(call gotest,peer-icicle,-tags icicle -count=1 -run ICICLE -v .)

.DEFAULT_GOAL := $(_peer_mk_default_goal)
