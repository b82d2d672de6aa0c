# Fleetplane build, generate, test and run targets. Every tool the project
# needs is built from the Go module proxy into ./bin.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
GO ?= go
BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
# kcp-dev modules (and a few k8s staging modules) are unknown to the checksum
# database; go.sum is committed, so this only matters when adding modules.
export GONOSUMDB := github.com/kcp-dev,k8s.io

CONTROLLER_GEN_VERSION := v0.17.3
CONTROLLER_GEN := $(BIN)/controller-gen

# How many kcp shards `make run` runs the hub on (2 or more: behind a
# front-proxy on FLEET_PORT), where it keeps their state, and the port.
SHARDS ?= 1
FLEET_ROOT ?= $(CURDIR)/.fleet$(if $(filter-out 1,$(SHARDS)),-$(SHARDS)-shards)
FLEET_PORT ?= 6443
# Log verbosity of `make run`'s hub and syncers: 2 logs every decision
# about a placement (docs/operations.md).
VERBOSITY ?= 0

TEST_TIMEOUT ?= 60m

# The board's page (board/web) is built with Vite from the npm registry;
# its output, board/web/dist, is committed and embedded, so Go alone builds
# the binaries.
.PHONY: board-web browser

.PHONY: all build cluster-bins generate verify lint test test-unit test-e2e test-e2e-sharded test-soak run bench bench-scale bench-shards bench-board bench-tenancy images fuzz clean

all: build

# Without the symbol table and DWARF (stack traces and pprof keep working):
# a syncer touches 4 MB less of its binary, which is most of its memory.
# The syncer is also built without cgo, as it ships: without the C library
# mapped in, an idle syncer is ~1 MB smaller.
GO_LDFLAGS ?= -s -w

## build: compile fleet-hub, fleet-syncer and kubectl-fleet (also linked as kubectl-ws) into ./bin
build:
	$(GO) build -ldflags '$(GO_LDFLAGS)' -o $(BIN)/fleet-hub ./cmd/fleet-hub
	CGO_ENABLED=0 $(GO) build -ldflags '$(GO_LDFLAGS)' -o $(BIN)/fleet-syncer ./cmd/fleet-syncer
	$(GO) build -ldflags '$(GO_LDFLAGS)' -o $(BIN)/fleet-dev ./cmd/fleet-dev
	$(GO) build -ldflags '$(GO_LDFLAGS)' -o $(BIN)/kubectl-fleet ./cmd/kubectl-fleet
	ln -sf kubectl-fleet $(BIN)/kubectl-ws

## board-web: rebuild the fleet board's page (board/web/dist) with Vite
board-web:
	cd board/web && npm ci --no-audit --no-fund && npm run build

## browser: Debian's Chromium for the board's browser specs, installed with
## apt-get when it is missing
browser:
	@command -v chromium >/dev/null || { echo "installing Debian's chromium for the board's browser specs"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && $(if $(filter 0,$(shell id -u)),,sudo) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
	@chromium --version

## fuzz: run each fuzz target for FUZZTIME (a crash is saved under the
## package's testdata/fuzz and then runs with the unit tests)
FUZZTIME ?= 60s
FUZZ_TARGETS := ./controllers/placement:FuzzSelectResources ./controllers/common/overrides:FuzzApply ./controllers/scheduler/plugins/clusteraffinity:FuzzPropertySelection ./controllers/common/envelopes:FuzzOpen ./syncer/workapplier:FuzzDecode
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; echo "== $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

## images: OCI images of the hub and the syncer as tarballs in ./bin
## (fleet-hub-image.tar, fleet-syncer-image.tar), built without a container
## daemon from static linux binaries; `docker load -i` or `crane push` them
IMAGE_REPOSITORY ?= fleetplane
IMAGE_TAG ?= latest
images:
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -ldflags '$(GO_LDFLAGS)' -o $(BIN)/linux/fleet-hub ./cmd/fleet-hub
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -ldflags '$(GO_LDFLAGS)' -o $(BIN)/linux/fleet-syncer ./cmd/fleet-syncer
	$(GO) run ./build/images --bin-dir $(BIN) --repository $(IMAGE_REPOSITORY) --tag $(IMAGE_TAG)

## cluster-bins: what a local member cluster runs (internal/localcluster): etcd,
## kube-apiserver, kube-controller-manager and kube-scheduler built from the
## separate module test/cluster, plus kwok and its Stage configs
KWOK_VERSION := v0.8.0
# kwok's own stages (kustomize/stage in its module): nodes become Ready and keep
# heart-beating, pods become Ready, Job pods complete, deleted pods go away.
KWOK_STAGES := node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml \
	pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml
K8S_BINS := $(addprefix $(BIN)/,etcd kube-apiserver kube-controller-manager kube-scheduler)
CLUSTER_BINS := $(K8S_BINS) $(BIN)/kwok $(BIN)/kwok-stages.yaml
cluster-bins: $(CLUSTER_BINS)

# -X stamps the version they report (/version, `kubectl version`, user
# agents): a plain go build says v0.0.0-master+$$Format:%H$$, which kubectl
# cannot parse.
K8S_VERSION_PKGS := k8s.io/component-base/version k8s.io/client-go/pkg/version
$(K8S_BINS): $(BIN)/%: test/cluster/cmd/%/main.go test/cluster/go.mod test/cluster/go.sum
	cd test/cluster && v=$$($(GO) list -m -f '{{.Version}}' k8s.io/kubernetes) && minor=$${v#v1.} && \
	$(GO) build -o $@ -ldflags "$(foreach p,$(K8S_VERSION_PKGS),-X $(p).gitVersion=$$v -X $(p).gitMajor=1 -X $(p).gitMinor=$${minor%%.*})" ./cmd/$*

$(BIN)/kwok:
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)

# Copied from the module cache at build time rather than committed.
$(BIN)/kwok-stages.yaml:
	mkdir -p $(BIN)
	dir=$$($(GO) mod download -json sigs.k8s.io/kwok@$(KWOK_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p') && \
	for f in $(KWOK_STAGES); do echo "---"; cat "$$dir/kustomize/stage/$$f"; done > $@.tmp
	mv $@.tmp $@

$(CONTROLLER_GEN):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

## generate: deepcopy, CRDs (controller-gen, and the cluster inventory API's) and kcp APIResourceSchemas/APIExports (config/schemagen)
generate: $(CONTROLLER_GEN)
	$(CONTROLLER_GEN) object paths=./apis/...
	rm -f config/crds/*.yaml && $(CONTROLLER_GEN) crd paths=./apis/... output:crd:dir=config/crds
	# The cluster inventory API's ClusterProfile, as its module publishes it.
	$(GO) mod download sigs.k8s.io/cluster-inventory-api
	cp "$$($(GO) list -m -f '{{.Dir}}' sigs.k8s.io/cluster-inventory-api)/config/crd/bases/multicluster.x-k8s.io_clusterprofiles.yaml" config/crds/
	chmod u+w config/crds/multicluster.x-k8s.io_clusterprofiles.yaml
	rm -f config/fleet/apiresourceschemas-*.yaml config/fleet/apiexport-*.yaml
	$(GO) run ./config/schemagen -crds config/crds -out config/fleet

## verify: fail if code is not gofmt'ed or vetted, or generated files are
## not what make generate writes (uncommitted edits are compared as they are)
verify: $(CONTROLLER_GEN)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	@state() { git status --porcelain=v1 --untracked-files=all -- apis config; git diff -- apis config; }; \
	before=$$(state); $(MAKE) --no-print-directory generate >/dev/null; \
	test "$$before" = "$$(state)" || { echo "generated files are stale: run make generate and commit"; git status --short -- apis config; exit 1; }

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
$(GOLANGCI_LINT):
	mkdir -p $(BIN)/.golangci && GOBIN=$(BIN)/.golangci $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/.golangci/golangci-lint $@

## lint: golangci-lint with the linters of .golangci.yml
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

## test: verify and lint, unit tests, then the e2e suites against a real
## embedded hub
test: verify lint build test-unit test-e2e

test-unit:
	$(GO) test ./apis/... ./board/... ./cmd/... ./config/... ./internal/... ./metrics/... ./workspaces/... ./controllers/... ./syncer/... \
		github.com/kcp-dev/kcp/pkg/informer github.com/kcp-dev/kcp/pkg/server/filters github.com/kcp-dev/kcp/pkg/reconciler/garbagecollector github.com/kcp-dev/kcp/pkg/admission/validatingadmissionpolicy k8s.io/apiextensions-apiserver/pkg/apiserver/validation k8s.io/apiextensions-apiserver/pkg/apiserver \
		k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting \
		github.com/kcp-dev/apimachinery/v2/pkg/client github.com/kcp-dev/apimachinery/v2/pkg/cache github.com/kcp-dev/apimachinery/v2/third_party/informers

# The e2e suites run in two lanes at once, each line of output marked with
# its lane: the placement suite, the longest, in one; the others one after
# another in the second. Their hubs and members mostly wait on each other,
# so two lanes on two cores take the placement suite's time, not the sum.
E2E_LANE_PLACEMENT := ./test/e2e/placement
E2E_LANE_OTHERS = $(filter-out $(E2E_LANE_PLACEMENT) ./test/e2e/framework,$(patsubst github.com/fleetplane/fleetplane/%,./%,$(shell $(GO) list ./test/e2e/...)))
E2E_FLAGS = -timeout $(TEST_TIMEOUT) -ginkgo.timeout $(TEST_TIMEOUT) -count=1 -v -ginkgo.v -ginkgo.no-color

test-e2e: build cluster-bins browser
	$(MAKE) --no-print-directory -j2 e2e-lane-placement e2e-lane-others

.PHONY: e2e-lane-placement e2e-lane-others
e2e-lane-placement:
	FLEET_BIN_DIR=$(BIN) $(GO) test -p 1 $(E2E_LANE_PLACEMENT) $(E2E_FLAGS) 2>&1 | sed -u 's/^/[placement] /'
e2e-lane-others:
	FLEET_BIN_DIR=$(BIN) $(GO) test -p 1 $(E2E_LANE_OTHERS) $(E2E_FLAGS) 2>&1 | sed -u 's/^/[others] /'

## test-e2e-sharded: the placement suite against a hub of SHARDS shards
## (2 unless set) behind a front-proxy; kcp spreads the specs' team
## workspaces over the shards
test-e2e-sharded: build cluster-bins
	FLEET_BIN_DIR=$(BIN) FLEET_E2E_SHARDS=$(if $(filter-out 1,$(SHARDS)),$(SHARDS),2) $(GO) test -p 1 $(E2E_LANE_PLACEMENT) $(E2E_FLAGS)

## test-soak: the load specs at soak size: 5 teams creating 100 placements
## each while members join and leave (make test: 20 each), and 1,000 team
## workspaces created and deleted twice (make test: 200, once); the hub's
## goroutines and memory must return to where they were (memory in use
## read 15 minutes after each round's checks: within 0.45 MiB per workspace
## of the baseline, and the live heap after the second round within 0.05
## MiB of the first; make test allows 1.25 MiB once the live heap is
## back). The delete strategies 20 times each (make test: 5). Ginkgo's own
## limit (an hour unless set) is raised to SOAK_TIMEOUT, as make test's is
## to TEST_TIMEOUT
SOAK_TIMEOUT ?= 3h
test-soak: build cluster-bins
	FLEET_BIN_DIR=$(BIN) FLEET_CHURN_WORKSPACES=1000 FLEET_CHURN_ROUNDS=2 FLEET_CHURN_SETTLE=15m $(GO) test ./test/e2e/hub/ -timeout $(SOAK_TIMEOUT) -ginkgo.timeout $(SOAK_TIMEOUT) -count=1 -v -ginkgo.v -ginkgo.no-color -ginkgo.focus 'come and go'
	FLEET_BIN_DIR=$(BIN) FLEET_LOAD_TEAMS=5 FLEET_LOAD_PLACEMENTS=100 FLEET_DELETE_RUNS=20 $(GO) test ./test/e2e/placement/ -timeout $(SOAK_TIMEOUT) -ginkgo.timeout $(SOAK_TIMEOUT) -count=1 -v -ginkgo.v -ginkgo.no-color -ginkgo.focus 'Load converges|Delete strategies'

## run: start the hub (state in .fleet/) and 3 local member clusters with their
## syncers, print the fleet and how to use it; Ctrl-C stops everything.
## SHARDS=2 runs the hub as a root shard, shard-1 and a front-proxy (state
## in .fleet-2-shards/)
run: build cluster-bins
	$(BIN)/fleet-dev --root-dir $(FLEET_ROOT) --secure-port $(FLEET_PORT) --members 3 --shards $(SHARDS) --v $(VERBOSITY)

clean:
	rm -rf $(BIN) _output

## bench: performance benchmarks: the scheduler (one PickN(100) decision over
## 1,000 member clusters with affinity and topology spread; target p99 <= 20ms),
## the syncer cache's memory per placed object, the board's views of
## 1,000 placements of 100 clusters over 1,000 members (time and size),
## a 300-member pass of the scale harness (with 100 placements of 30 clusters
## present for the loaded figures and a hub restart) and the figures of 3 real
## members (test/scale --real-members 3); results and profiles in _output/
bench: build cluster-bins
	$(GO) test ./controllers/scheduler/framework/ -run '^$$' -bench . -benchtime 3s -benchmem
	$(GO) test ./syncer/workapplier/ -run '^$$' -bench CachedObjectMemory -benchtime 3x
	$(GO) test ./board/ -run '^$$' -bench View -benchtime 10x
	mkdir -p _output
	FLEET_BIN_DIR=$(BIN) $(GO) run ./test/scale --members 300 --heartbeat-spread 20s --load 100 --load-pick 30 --settle-restarted=false --out $(CURDIR)/_output/scale-300.json --profile-dir $(CURDIR)/_output
	FLEET_BIN_DIR=$(BIN) $(GO) run ./test/scale --real-members 3 --out $(CURDIR)/_output/scale-real3.json --profile-dir $(CURDIR)/_output

## bench-scale: the scale harness at 1,000 simulated members, then with
## SCALE_LOAD placements of 100 clusters present and a hub restart (test/scale;
## SCALE_ARGS adds flags, e.g. --hub-kubeconfig FILE for an external hub)
SCALE_MEMBERS ?= 1000
SCALE_LOAD ?= 100
bench-scale: build
	mkdir -p _output
	FLEET_BIN_DIR=$(BIN) $(GO) run ./test/scale --members $(SCALE_MEMBERS) --load $(SCALE_LOAD) --out $(CURDIR)/_output/scale-$(SCALE_MEMBERS).json --profile-dir $(CURDIR)/_output $(SCALE_ARGS)

## bench-shards: 1,000 simulated members and 1,000 team workspaces with a
## PickN(10) placement each, on a hub of BENCH_SHARDS kcp shards (2 unless
## set; 1 for the same on one): each shard's memory growth per workspace,
## and PickN(100) timed in a new workspace on each shard
BENCH_SHARDS ?= 2
bench-shards: build
	mkdir -p _output
	FLEET_BIN_DIR=$(BIN) $(GO) run ./test/scale --members 1000 --teams 1000 --shards $(BENCH_SHARDS) --out $(CURDIR)/_output/scale-shards-$(BENCH_SHARDS).json $(SCALE_ARGS)

## bench-board: the fleet board in headless Chromium over 1,000 simulated
## members and BOARD_PLACEMENTS placements of BOARD_PICK clusters in one
## team workspace (the team limits raised to hold them): the grid's first
## rows, its longest frame while scrolling, a new placement's arrival
BOARD_PLACEMENTS ?= 1000
BOARD_PICK ?= 10
bench-board: build browser
	mkdir -p _output
	FLEET_BIN_DIR=$(BIN) $(GO) run ./test/scale --members 1000 --samples 3 --board $(BOARD_PLACEMENTS) --board-pick $(BOARD_PICK) \
		--hub-arg=--team-limit-placements=100000 --hub-arg=--team-limit-objects=10000000 --hub-arg=--team-limit-storage=64Gi \
		--out $(CURDIR)/_output/scale-board.json $(SCALE_ARGS)

## bench-tenancy: 500 team workspaces with a PickN(10) placement each over
## 1,000 simulated members: the hub's memory per workspace, and a new
## placement's time in workspace 501 against the first
bench-tenancy: build
	mkdir -p _output
	FLEET_BIN_DIR=$(BIN) $(GO) run ./test/scale --members 1000 --teams 500 --out $(CURDIR)/_output/scale-tenancy.json $(SCALE_ARGS)
