# wsfan's build. CI calls `make test`; every target works on a fresh clone.
GO        ?= go
MODULES   := . bench bench/peers natstest browsertest gethtest
COUNT     ?= 6
BENCHTIME ?= 300ms
BENCH     ?= .
RESULTS   := bench/results
BENCHSTAT := $(GO) run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
ERRCHECK    := $(GO) run github.com/kisielk/errcheck@v1.30.0
# The in-memory steps pkg/client measures itself (handle_incoming rows);
# `make bench` runs them into the same results file. Empty skips them.
BENCH_CLIENT ?= RouteTicker|ResolveResponse|EncodeRequest|SubscribeFrame|Resubscribe
# bench-compare compares OLD with NEW; bench-peers reads NEW.
OLD       ?= $(RESULTS)/baseline.txt
NEW       ?= $(RESULTS)/latest.txt

.PHONY: all build test test-quick soak-failover nats-frozen vet lint bench bench-smoke bench-compare bench-peers bench-plot demo fuzz image chart-test unit-check

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

# test-quick: the main module alone, vet and tests, without the race
# detector, the other modules (bench, NATS, browsers, go-ethereum) or the
# benchmarks: for the edit-and-test loop. CI runs `make test`.
test-quick:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# soak-failover: Toxiproxy faults (down, reset_peer, a black hole) on one
# leg of a hot-standby sidecar serving Deribit books, 10 runs each, with
# the race detector: 0 unmarked breaks and 0 stale books (issue 44).
# A few minutes; not part of test.
soak-failover:
	$(GO) test -race -tags soak -count=1 -run '^TestSoakFailover$$' -v -timeout 20m ./internal/reliability/

# nats-frozen: a NATS group's leader in a child process stopped
# (SIGSTOP) for 5 s: how long the exchange sees two subscribed
# connections, within the freeze minus 3/4 of the lease TTL (issue 52).
# About 10 s; not part of test (its bound is a timing).
nats-frozen:
	cd natstest && $(GO) test -race -tags frozen -count=1 -run '^TestFrozenLeaderOverlap$$' -v .

bench-smoke:
	@for m in $(MODULES); do (cd $$m && $(GO) test -run '^$$' -bench . -benchtime 1x ./...) || exit 1; done

# lint: what CI refuses to land. Untidy go.mod/go.sum in any module,
# unformatted files, vet and staticcheck findings, and unchecked errors in
# the library's non-test code all fail it.
lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@for m in $(MODULES); do (cd $$m && $(GO) mod tidy -diff) || { echo "go mod tidy needed in $$m"; exit 1; }; done
	@for m in $(MODULES); do (cd $$m && $(STATICCHECK) ./...) || exit 1; done
	$(ERRCHECK) -ignoretests ./...

# fuzz: every fuzz target for FUZZTIME each, as package:target. Each
# exchange package (every pkg/*/register.go): FuzzClassify (no panics, slices inside the frame) and
# FuzzRoute (its key scanner against encoding/json, with its oracle), both
# from pkg/protocol/protocoltest; pkg/sidecar: what local clients send
# (FuzzLocalFrame: frames through each dialect's server half, every answer
# valid JSON; FuzzStreamQuery: the SSE query and Last-Event-ID);
# internal/redact: FuzzURL (no password shown, idempotent); pkg/book:
# FuzzApply (a book against a plain map) and FuzzParseDecimal (reads back
# as it prints); pkg/record: FuzzDecodeRecord (a damaged segment's bytes:
# no panic, reads back as appended); pkg/standby: FuzzCopyBytes (every
# venue's copy layout: inside the frame, never an answer or an event
# hashed). Their seed
# corpora (testdata/fuzz) run in every `go test`. The default budget is a
# count, not a duration: before Go 1.27 a duration can end a clean run
# with a spurious "context deadline exceeded" (go.dev/issue/75804).
# 200000x takes under 30 s a target on 2 cores; raise it for a longer hunt.
EXCHANGES := $(patsubst pkg/%/register.go,%,$(wildcard pkg/*/register.go))
FUZZTIME ?= 200000x
FUZZ_TARGETS := $(foreach e,$(EXCHANGES),pkg/$(e):FuzzClassify pkg/$(e):FuzzRoute) \
	pkg/sidecar:FuzzLocalFrame pkg/sidecar:FuzzStreamQuery internal/redact:FuzzURL \
	pkg/book:FuzzApply pkg/book:FuzzParseDecimal pkg/record:FuzzDecodeRecord \
	pkg/standby:FuzzCopyBytes
fuzz:
	@for pt in $(FUZZ_TARGETS); do \
		p=$${pt%%:*}; t=$${pt#*:}; \
		$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./$$p || exit 1; \
	done

demo:
	$(GO) run ./cmd/sidecar -demo

# image: the sidecar's container image as an OCI archive, $(IMAGE), built
# without a container daemon or a registry by deploy/tools (its own module:
# go-containerregistry stays out of the library's go.mod), then checked:
# validated, non-root, labelled; and the test builds it twice (one digest),
# runs the binary from its layer (-version, the demo on loopback). See
# docs/deploy.md.
IMAGE ?= wsfan-sidecar.oci.tar
image:
	cd deploy/tools && $(GO) run ./cmd/wsfan-image -module $(CURDIR) -o $(abspath $(IMAGE))
	cd deploy/tools && $(GO) run ./cmd/wsfan-image -check $(abspath $(IMAGE))
	cd deploy/tools && $(GO) test -count=1 ./image

# chart-test: the Helm chart (deploy/helm/wsfan) linted and rendered with
# the Helm Go SDK in deploy/tools (no helm binary), and the rendered
# manifests checked: probes, securityContext, credentials only through
# secretKeyRef, the disruption budget; plus the tools module's own lint.
chart-test:
	cd deploy/tools && $(GO) mod tidy -diff && test -z "$$(gofmt -l .)" && $(GO) vet ./...
	cd deploy/tools && $(STATICCHECK) ./...
	cd deploy/tools && $(GO) test -count=1 ./chart

# unit-check: deploy/systemd/wsfan-sidecar.service through systemd-analyze
# verify (any warning fails it: an unknown directive is only a warning
# there) and its offline security review (exposure at most 2.0), pointed
# at a freshly built sidecar, as verify needs the ExecStart binary. Skipped,
# saying so, where systemd-analyze is missing.
unit-check:
	@command -v systemd-analyze >/dev/null || { echo "unit-check: skipped, systemd-analyze is not installed (Debian: apt-get install systemd)"; exit 0; }; \
	d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	CGO_ENABLED=0 $(GO) build -o "$$d/wsfan-sidecar" ./cmd/sidecar && \
	sed "s|/usr/local/bin/wsfan-sidecar|$$d/wsfan-sidecar|" deploy/systemd/wsfan-sidecar.service > "$$d/wsfan-sidecar.service" && \
	out=$$(systemd-analyze verify "$$d/wsfan-sidecar.service" 2>&1) && [ -z "$$out" ] || { echo "$$out"; exit 1; }; \
	systemd-analyze security --offline=yes --threshold=20 "$$d/wsfan-sidecar.service" | tail -1 && \
	echo "unit-check: systemd-analyze verify passed"

# bench: the whole suite (bench/ and the client's own benchmarks) into
# bench/results/<UTC time>-<commit>.txt and bench/results/latest.txt, in
# COUNT rounds that each run every benchmark once for BENCHTIME. Rounds
# interleave the implementations a comparison puts side by side (wsfan,
# go-ethereum, gorilla; server in-process and in a child process), so a
# busy spell of the machine falls on all of them rather than on the one
# that happened to run then. COUNT=6 takes about 12 minutes on 2 cores.
bench:
	@mkdir -p $(RESULTS)
	@out=$(RESULTS)/$$(date -u +%Y%m%dT%H%M%SZ)-$$(git rev-parse --short HEAD).txt; \
	flags="-run ^$$ -benchmem -count 1 -benchtime $(BENCHTIME) -timeout 60m"; \
	{ rc=0; for round in $$(seq $(COUNT)); do \
	    { (cd bench && $(GO) test $$flags -bench '$(BENCH)' ./...) && \
	      (cd bench/peers && $(GO) test $$flags -bench '$(BENCH)' ./...) && \
	      { [ -z '$(BENCH_CLIENT)' ] || $(GO) test $$flags -bench '$(BENCH_CLIENT)' ./pkg/client; }; } || { rc=1; break; }; \
	  done; echo $$rc > $$out.rc; } 2>&1 | tee $$out; \
	rc=$$(cat $$out.rc); rm -f $$out.rc; [ "$$rc" = 0 ] || { echo "bench failed: see $$out"; exit 1; }; \
	cp $$out $(NEW); echo "wrote $$out and $(NEW)"

# bench-compare: benchstat tables of OLD (default: the committed baseline)
# against NEW (default: the last `make bench`).
bench-compare:
	$(BENCHSTAT) $(OLD) $(NEW)

# bench-peers: wsfan against go-ethereum's rpc client and raw gorilla,
# benchmark by benchmark, from one run (NEW).
bench-peers:
	$(BENCHSTAT) -filter '/impl:(wsfan OR geth OR gorilla)' -col /impl $(NEW)

# bench-plot: SVG bar charts of OLD (and NEW, when it exists), wsfan beside
# go-ethereum and raw gorilla, into bench/results/ for BENCHMARKS.md
# (bench/cmd/benchplot, gonum/plot: its dependencies stay in bench/go.mod).
bench-plot:
	cd bench && $(GO) run ./cmd/benchplot -o $(abspath $(RESULTS)) $(abspath $(OLD)) $(if $(wildcard $(NEW)),$(abspath $(NEW)))
