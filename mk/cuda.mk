# mk/cuda.mk: the CUDA backend's build (gpu/cuda, build tag "cuda") and the
# commands that run it on a GPU host. Included by the root Makefile; also
# usable alone from the repository root: make -f mk/cuda.mk icicle.
# Nothing here is needed by the default build or `make test`, which runs
# the CUDA backend's tests where the front end is built.
#
# Here (any host, no CUDA):
#   icicle          ICICLE's C++ front end and its CPU device, from the Go
#                   module cache, into $(ICICLE_INSTALL) (about 3 minutes on 2
#                   cores; skipped when built)
#   build-cuda      bin/provebench-cuda (-tags cuda)
#   bench-cuda-bin  bin/cuda.test, the gpu/cuda tests and benchmarks
#   test-cuda       go test -tags cuda ./gpu/cuda/... on ICICLE's CPU device
#                   (PROVEBENCH_ICICLE_DEVICE=CUDA on a GPU host with Go)
#   vet-cuda        go vet -tags cuda ./...
# make test runs the last three when the front end is built (mk/test.mk).
# On a GPU host (cmake, nvcc):
#   icicle-cuda     ICICLE's CUDA backend from source into $(ICICLE_CUDA_DIR)
#                   (about 25 minutes on 16 cores; skipped when present)
# On a GPU host, without Go (the binaries and folders carried from here):
#   run-cuda        bin/provebench-cuda run $(SCENARIO) --backend cuda
#   bench-cuda      bin/cuda.test's benchmarks at $(PROVEBENCH_BENCH_LOG)
#   cuda-env        print the environment the two above set, for a shell
#
# The binaries find the front end through an rpath relative to bin/
# ($(ICICLE_RPATH)), so the repository can be copied elsewhere with its
# git-ignored .icicle/ and .device/ folders and run there.

# Make the including Makefile's first target, not this file's, the default.
_cuda_mk_default_goal := $(.DEFAULT_GOAL)

include $(dir $(lastword $(MAKEFILE_LIST)))gotest.mk

GO ?= go
CMAKE ?= cmake
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# ICICLE's sources: the icicle/ folder of the icicle-gnark module go.mod
# pins (read-only in the module cache: every build is out of source).
ICICLE_MODULE ?= github.com/ingonyama-zk/icicle-gnark/v3
# (downloaded first: a fresh module cache has no copy, and list then prints nothing)
ICICLE_SRC ?= $(shell $(GO) mod download $(ICICLE_MODULE) >/dev/null 2>&1; $(GO) list -m -f '{{.Dir}}' $(ICICLE_MODULE))/icicle

ICICLE_BUILD ?= $(CURDIR)/.icicle/build
ICICLE_INSTALL ?= $(CURDIR)/.icicle/install
ICICLE_LIB = $(ICICLE_INSTALL)/lib
ICICLE_RPATH ?= $$ORIGIN/../.icicle/install/lib

# The CUDA backend libraries (libicicle_backend_cuda_*.so), flat.
ICICLE_CUDA_DIR ?= $(CURDIR)/.device/icicle-cuda
ICICLE_CUDA_BUILD ?= $(CURDIR)/.icicle/build-cuda
CUDA_ARCH ?= 90
# Set NVCC when nvcc is not on PATH (e.g. /usr/local/cuda/bin/nvcc).
NVCC ?=

CUDA_TEST_BIN ?= bin/cuda.test
CUDA_BIN ?= bin/provebench-cuda
SCENARIO ?= scenarios/gpu.yaml
PROVEBENCH_BENCH_LOG ?= 20,22,24
CUDA_BENCH ?= Prove|Kernels|SteadyState|Upload
PROVEBENCH_ICICLE_DEVICE ?= CPU

ICICLE_FRONTEND = $(ICICLE_LIB)/libicicle_curve_bls12_381.so
ICICLE_CUDA_CURVE = $(ICICLE_CUDA_DIR)/libicicle_backend_cuda_curve_bls12_381.so

# cgo links gpu/cuda against the front end; CGO_LDFLAGS from the
# environment bypasses cgo's flag allowlist, which rejects $ORIGIN.
CUDA_GO_ENV = CGO_ENABLED=1 CGO_LDFLAGS='-L$(ICICLE_LIB) -Wl,-rpath,$(ICICLE_RPATH)'

# What a process using the CUDA backend needs at run time. The backend
# loads the three libraries in dependency order itself; LD_LIBRARY_PATH
# also lets ICICLE's own loader (and other tools) find them.
CUDA_RUN_ENV = ICICLE_BACKEND_INSTALL_DIR='$(ICICLE_CUDA_DIR)' \
	LD_LIBRARY_PATH='$(ICICLE_CUDA_DIR):$(ICICLE_LIB)'"$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}"

.PHONY: icicle icicle-cuda build-cuda bench-cuda-bin test-cuda vet-cuda run-cuda bench-cuda cuda-env

icicle: $(ICICLE_FRONTEND)

$(ICICLE_FRONTEND):
	@test -d '$(ICICLE_SRC)' || { echo "ICICLE sources not found at $(ICICLE_SRC): run '$(GO) mod download $(ICICLE_MODULE)'"; exit 1; }
	$(CMAKE) -S '$(ICICLE_SRC)' -B '$(ICICLE_BUILD)' -DCURVE=bls12_381 -DG2=ON \
		-DCUDA_BACKEND=OFF -DCPU_BACKEND=ON -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX='$(ICICLE_INSTALL)'
	$(CMAKE) --build '$(ICICLE_BUILD)' --target install -j $(JOBS)

icicle-cuda: $(ICICLE_CUDA_CURVE)

$(ICICLE_CUDA_CURVE):
	@test -d '$(ICICLE_SRC)' || { echo "ICICLE sources not found at $(ICICLE_SRC): run '$(GO) mod download $(ICICLE_MODULE)'"; exit 1; }
	$(CMAKE) -S '$(ICICLE_SRC)' -B '$(ICICLE_CUDA_BUILD)' -DCURVE=bls12_381 -DG2=ON \
		-DCUDA_BACKEND=ON -DCPU_BACKEND=ON -DCUDA_ARCH=$(CUDA_ARCH) -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX='$(ICICLE_CUDA_BUILD)/install' \
		$(if $(NVCC),-DCMAKE_CUDA_COMPILER='$(NVCC)')
	$(CMAKE) --build '$(ICICLE_CUDA_BUILD)' --target install -j $(JOBS)
	mkdir -p '$(ICICLE_CUDA_DIR)'
	find '$(ICICLE_CUDA_BUILD)/install/lib/backend' -name 'libicicle_backend_cuda_*.so' -exec cp {} '$(ICICLE_CUDA_DIR)/' \;
	@test -f '$@' || { echo "the CUDA build produced no $(notdir $@)"; exit 1; }

build-cuda: icicle
	$(CUDA_GO_ENV) $(GO) build -buildvcs=auto -tags cuda -o $(CUDA_BIN) ./cmd/provebench

# Test binaries record no VCS state: the commit goes in through the linker,
# with "-dirty" when the tree has uncommitted changes.
BENCH_REVISION = $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)

bench-cuda-bin: icicle
	$(CUDA_GO_ENV) $(GO) test -c -tags cuda \
		-ldflags '-X github.com/provebench/provebench/gpu/internal/benchenv.Revision=$(BENCH_REVISION)' \
		-o $(CUDA_TEST_BIN) ./gpu/cuda

# The test binary runs from a temporary folder, where the rpath relative
# to bin/ does not reach: LD_LIBRARY_PATH does.
test-cuda: icicle $(GOTEST_DEPS)
	$(CUDA_GO_ENV) $(CUDA_RUN_ENV) PROVEBENCH_ICICLE_DEVICE=$(PROVEBENCH_ICICLE_DEVICE) \
		$(call gotest,cuda,-tags cuda -count=1 ./gpu/cuda/...)

# Every package as the cuda build sees it (gpu/backends registers the
# backend there); cgo needs the front end to type-check gpu/cuda.
vet-cuda: icicle
	$(CUDA_GO_ENV) $(GO) vet -tags cuda ./...

run-cuda:
	@test -x $(CUDA_BIN) || { echo "$(CUDA_BIN) is missing: run 'make build-cuda' on a host with Go"; exit 1; }
	@test -f '$(ICICLE_CUDA_CURVE)' || { echo "no CUDA backend in $(ICICLE_CUDA_DIR): copy it there or run 'make icicle-cuda'"; exit 1; }
	$(CUDA_RUN_ENV) $(CUDA_BIN) run $(SCENARIO) --backend cuda

bench-cuda:
	@test -x $(CUDA_TEST_BIN) || { echo "$(CUDA_TEST_BIN) is missing: run 'make bench-cuda-bin' on a host with Go"; exit 1; }
	@test -f '$(ICICLE_CUDA_CURVE)' || { echo "no CUDA backend in $(ICICLE_CUDA_DIR): copy it there or run 'make icicle-cuda'"; exit 1; }
	$(CUDA_RUN_ENV) PROVEBENCH_BENCH_LOG=$(PROVEBENCH_BENCH_LOG) \
		$(CUDA_TEST_BIN) -test.run '^$$' -test.bench '$(CUDA_BENCH)' -test.benchtime 1x -test.timeout 0

cuda-env:
	@echo export ICICLE_BACKEND_INSTALL_DIR='$(ICICLE_CUDA_DIR)'
	@echo export LD_LIBRARY_PATH='$(ICICLE_CUDA_DIR):$(ICICLE_LIB)'"$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}"

.DEFAULT_GOAL := $(_cuda_mk_default_goal)
