# wsfan's build. CI calls `make test`; every target works on a fresh clone.
GO        ?= go
MODULES   := . bench
COUNT     ?= 6
BENCHTIME ?= 1s
BENCH     ?= .
RESULTS   := bench/results
BENCHSTAT := $(GO) run golang.org/x/perf/cmd/benchstat@v0.0.0-20250515181824-bc92a0e8a5ef

.PHONY: all build test vet lint bench bench-smoke bench-compare bench-peers demo fuzz

all: build test

build:
	@for m in $(MODULES); do (cd $$m && $(GO) build ./...) || exit 1; done

vet:
	@for m in $(MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done

# test: vet, the race detector over every module, and every benchmark run
# once so they keep compiling and stay correct (nothing is timed).
test: vet
	@for m in $(MODULES); do (cd $$m && $(GO) test -race -count=1 ./...) || exit 1; done
	$(MAKE) bench-smoke

bench-smoke:
	@for m in $(MODULES); do (cd $$m && $(GO) test -run '^$$' -bench . -benchtime 1x ./...) || exit 1; done

lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzClassify -fuzztime 30s ./pkg/protocol

demo:
	$(GO) run ./cmd/sidecar -demo
