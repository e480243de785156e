# mk/test.mk: make test's suites beyond the module's own. Included by the
# root Makefile after mk/cuda.mk and mk/peer.mk, whose targets it runs.
#
# make test runs, in order: go vet and gofmt; the module's tests (suite
# "unit"); the engine's under the race detector ("race"); then
#   cuda         gpu/cuda's tests (-tags cuda) on ICICLE's CPU device, go vet
#                -tags cuda ./... and bin/provebench-cuda, when ICICLE's
#                front end is built (make icicle: cmake, ~3 minutes on 2
#                cores)
#   peer         the peer module's vet and tests (peers/gnark), when
#                bin/peer-gnark is built (make peer-gnark); they use
#                bin/provebench too, rebuilt first
#   peer-icicle  the peer's ICICLE build (-tags icicle): vet, and its test
#                on ICICLE's CPU device, when both are built (the test skips
#                itself below three hardware threads, where that device
#                aborts)
# and last the fuzzing. A suite whose prerequisite is not built is skipped
# with a line that says so and how to build it: make test-setup builds them
# all (cmake needed). Where bin/peer-gnark is built it is rebuilt before the
# unit suite, whose TestPeerGnarkScenario (cmd/provebench) runs it.
#
# With TESTJSON=DIR (mk/gotest.mk) the suites' streams are DIR/unit.json,
# race.json, cuda.json, peer.json and peer-icicle.json, each removed first.

include $(dir $(lastword $(MAKEFILE_LIST)))gotest.mk

TEST_SUITES := unit race cuda peer peer-icicle

.PHONY: test-setup test-prepare test-cuda-suite test-peer-suite

test-setup: icicle peer-gnark build

test-prepare: $(GOTEST_DEPS)
	@if [ -x '$(PEER_GNARK_BIN)' ]; then $(MAKE) --no-print-directory peer-gnark; fi
	$(if $(TESTJSON),rm -f $(foreach s,$(TEST_SUITES),'$(abspath $(TESTJSON))/$(s).json'))

test-cuda-suite:
	@if [ -f '$(ICICLE_FRONTEND)' ]; then \
		$(MAKE) --no-print-directory test-cuda vet-cuda build-cuda; \
	else \
		echo "make test: SKIPPED suite cuda (gpu/cuda's tests, go vet -tags cuda): ICICLE's front end is not built; make icicle builds it (needs cmake)"; \
	fi

test-peer-suite:
	@if [ ! -x '$(PEER_GNARK_BIN)' ]; then \
		echo "make test: SKIPPED suites peer and peer-icicle (peers/gnark's vet and tests): $(PEER_GNARK_BIN) is not built; make peer-gnark builds it"; \
	elif [ ! -f '$(ICICLE_FRONTEND)' ]; then \
		$(MAKE) --no-print-directory test-peer && \
		echo "make test: SKIPPED suite peer-icicle (peers/gnark -tags icicle): ICICLE's front end is not built; make icicle builds it (needs cmake)"; \
	else \
		$(MAKE) --no-print-directory test-peer test-peer-icicle; \
	fi
