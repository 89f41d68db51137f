# shakedown's build, test and demo entry points. CI runs .ci/run, which is
# "make test".

GO ?= go
BIN := bin/shakedown
# Pinned: staticcheck 2026.2.2. The proxy serves staticcheck by its module
# version (v0.x), not by its release name.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# The image's name; push it where your cluster pulls from, e.g.
# make image IMAGE=registry.example.com/team/shakedown:v1.
IMAGE ?= shakedown:$(VERSION)

.PHONY: all build image deps test test-vitess test-bisect test-capacity check demo demo-placement bench clean

all: build

# The version is written in internal/version; the commit is the one the
# toolchain records in a checkout, so "go install ./cmd/shakedown" prints
# the same version line. COMMIT covers where the toolchain records none (a
# git worktree, GOFLAGS=-buildvcs=false). CGO_ENABLED=0 makes it static.
COMMIT := $(shell git describe --always --dirty --abbrev=12 --match=NONE 2>/dev/null)
LDFLAGS := -X github.com/shakedown/shakedown/internal/version.commit=$(COMMIT)

build:
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/shakedown

# An image FROM scratch holding the static binary and CA certificates
# (see Dockerfile).
image: build
	docker build -t $(IMAGE) .

# Installs the database server, client and sysbench the tests and demo need.
deps:
	bash scripts/deps.sh

# The timeout guards against a hang, not against a slow machine: on 2 quiet
# cores internal/cli, the longest package, takes about 7 minutes under
# -race, and twice that beside a process that keeps one core busy.
test: deps
	$(GO) test -race -count=1 -timeout 20m ./...

# The Vitess tests need vtcombo, which no registry serves: it is built
# from the Go module vitess.io/vitess (about 4 minutes on 2 cores, once,
# into the user's cache), then the contract suite, the sandbox and the
# demo run against it (about 4 minutes more).
test-vitess: deps
	bash scripts/install-vitess.sh
	SHAKEDOWN_TEST_VITESS_FULL=1 $(GO) test -race -count=1 -timeout 15m -run 'TestContract/vitess|TestSandboxVitess|TestRunVitessKilledIsDegraded|TestDemoVitess' ./internal/cli/

# The full vars bisect of a durable against a relaxed sandbox measures for
# two to four minutes, alone. It is not part of "make test": the six
# variables it must clear move its workload by 2 to 5% on a 2-core machine,
# against a clearing margin of 8%, and it left them open in 3 of 4 runs.
BISECT_FULL = SHAKEDOWN_TEST_BISECT_FULL=1 $(GO) test -race -count=1 -run 'TestBisect/durable'

test-bisect: deps
	$(BISECT_FULL) -timeout 6m -v ./internal/bisect/

# capacity's search against a brute-force scan of rates in 2% steps, twice
# (about two and a half minutes of steps), and four searches a side of a
# durable against a relaxed sandbox (about two and a half minutes more).
# Alone: with other work on a 2-core host (load average near 14) the two
# searches were 40% apart, and the durable server's four capacities ran
# from 41/s to 578/s. scripts/device-capacity.sh runs both pinned on 16 cores.
test-capacity: deps
	SHAKEDOWN_TEST_CAPACITY_FULL=1 $(GO) test -count=1 -timeout 9m -v -run 'TestSearchMatchesScan|TestDurableAgainstRelaxed' ./internal/capacity/

check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt -l reports:"; echo "$$out"; exit 1; fi
	@# -e: a test-only dependency of a dependency is not on the module proxy.
	@$(GO) mod tidy -e -diff >/dev/null 2>&1 || { echo "go mod tidy would change go.mod/go.sum: run go mod tidy -e"; exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) test -race -short ./...

# Two local sandboxes (durable vs relaxed), a sweep and a report, then a
# rehearsal of moving a small application from one to the other, in a few
# minutes: out/demo/report.html, out/demo/shakedown.db, out/demo/plan.yaml,
# out/demo/rehearsal/ (the plan, its files and the readiness page).
demo: deps build
	$(BIN) demo --out out/demo

# The same server bound to cores against it under an equal CPU quota, with
# the quota's throttling counters: out/demo-placement/report.html. Needs a
# writable cgroup (root).
demo-placement: deps build
	$(BIN) demo --placement --out out/demo-placement

bench: build
	@if [ -f scripts/bench.sh ]; then bash scripts/bench.sh; else echo "make bench: no scripts/bench.sh yet"; fi

clean:
	rm -rf bin out
