# mk/gotest.mk: how make's test targets call go test, so that CI can read
# what ran and what skipped. Included by mk/cuda.mk (and so by mk/peer.mk)
# and by mk/test.mk; read once.
#
# TESTJSON=DIR: each suite's go test -json stream goes to DIR/SUITE.json,
# through scripts/testsummary, which prints what go test without -json
# would (package lines, failing tests' output, build errors); .ci/run then
# lists the skipped tests (testsummary skips). Unset: plain go test.
ifndef _gotest_mk
_gotest_mk := 1

GO ?= go
TESTJSON ?=
TESTSUMMARY ?= bin/testsummary

# $(call gotest,SUITE,ARGS): go test ARGS, its stream in $(TESTJSON)/SUITE.json
# when TESTJSON is set. One command, so that the environment a recipe puts
# before it reaches the tests; paths absolute, for the peer's suite runs in
# its own module's folder. A target using it lists $(GOTEST_DEPS).
gotest = $(if $(TESTJSON),'$(abspath $(TESTSUMMARY))' run -json '$(abspath $(TESTJSON))/$(1).json' -- $(GO) test -json $(2),$(GO) test $(2))
GOTEST_DEPS = $(if $(TESTJSON),testsummary)

.PHONY: testsummary
testsummary:
	$(GO) build -o $(TESTSUMMARY) ./scripts/testsummary

endif
