# agentbox: the targets mirror CI (.ci/run calls `make test`).
# Run `make help` for the list.

GO      ?= go
BIN     := bin
LINT    := $(BIN)/golangci-lint
LINTVER := v2.15.0

# The lab's own audit script: reference material beside the checkout
# (../shared, as CI lays it), never copied in; the audit's Docker tests run
# it as an oracle. Strict mode fails them when it is missing.
export AGENTBOX_LAB_AUDIT ?= $(abspath $(CURDIR)/../shared/lab/audit-sandbox.sh)

.PHONY: help build setup test integration rootless unit lint generate verify-generate bench run

help: ## list the targets
	@awk -F':.*## ' '/^[a-z-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# agentbox-ext is cmd/agentbox built with the agentbox_ext tag (audit,
# compose, kube), agentbox-containerd the same package with the
# agentbox_containerd tag (the containerd engine): agentbox executes them
# from beside itself so that `agentbox run` links none of them, and a run
# on containerd links nothing of compose's (README, "Three binaries"). EXT
# and CTRD are the tags for the go commands that must see their files.
EXT  := -tags agentbox_ext
CTRD := -tags agentbox_containerd

build: ## build bin/agentbox, bin/agentbox-ext, bin/agentbox-containerd and bin/agentbox-init (static, no cgo); install all four into one directory
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/agentbox ./cmd/agentbox
	CGO_ENABLED=0 $(GO) build -trimpath $(EXT) -o $(BIN)/agentbox-ext ./cmd/agentbox
	CGO_ENABLED=0 $(GO) build -trimpath $(CTRD) -o $(BIN)/agentbox-containerd ./cmd/agentbox
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/agentbox-init ./cmd/agentbox-init

setup: ## install and start what the tests need: packages, test user, Docker, containerd, agent CLIs, a kube-apiserver, gVisor's runsc (root; idempotent, cached)
	scripts/test-setup.sh
	scripts/runsc-build.sh >/dev/null
	scripts/containerd-up.sh
	for v in $(CONTAINERD_LINES); do scripts/containerd-up.sh $$v || exit 1; done
	scripts/agents-install.sh
	scripts/kube-up.sh

unit: ## unit tests only (no root, no daemons)
	$(GO) test -count=1 ./...
	$(GO) test -count=1 $(EXT) ./cmd/agentbox
	$(GO) test -count=1 $(CTRD) ./cmd/agentbox

test: setup build ## what CI runs: vet, lint, generated files, unit + integration as root, then rootless
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	$(GO) vet -tags integration,agentbox_ext ./cmd/agentbox
	$(GO) vet -tags integration,agentbox_containerd ./cmd/agentbox
	$(MAKE) lint
	$(MAKE) verify-generate
	$(GO) test -tags integration -count=1 -timeout 25m -skip 'Rootless$$' ./...
	$(GO) test -count=1 $(EXT) ./cmd/agentbox
	$(GO) test -count=1 $(CTRD) ./cmd/agentbox
	AGENTBOX_TEST_RUNTIME=runc $(GO) test -tags integration -count=1 -timeout 15m -skip 'Rootless$$' ./cmd/agentbox/
	AGENTBOX_TEST_ENGINE=containerd $(GO) test -tags integration -count=1 -timeout 15m -skip '$(CONTAINERD_SKIP)' ./cmd/agentbox/
	AGENTBOX_TEST_ENGINE=containerd AGENTBOX_TEST_RUNTIME=runc $(GO) test -tags integration -count=1 -timeout 15m -skip '$(CONTAINERD_SKIP)' ./cmd/agentbox/
	AGENTBOX_TEST_RUNTIME=runsc $(GO) test -tags integration -count=1 -timeout 10m -skip '$(RUNSC_SKIP)' ./cmd/agentbox/
	for v in $(CONTAINERD_LINES); do \
		sock=/run/agentbox-containerd-$$v/containerd.sock; \
		AGENTBOX_TEST_CONTAINERD=$$sock $(GO) test -tags integration -count=1 -timeout 5m ./engine/containerd/... && \
		AGENTBOX_TEST_CONTAINERD=$$sock $(GO) test -tags integration -count=1 -timeout 10m -run '^TestContainerd' ./cmd/agentbox/ && \
		AGENTBOX_TEST_CONTAINERD=$$sock AGENTBOX_TEST_ENGINE=containerd $(GO) test -tags integration -count=1 -timeout 10m -run '$(CORE_SUITE)' ./cmd/agentbox/ || exit 1; \
	done
	scripts/test-rootless.sh

# The whole root suite of cmd/agentbox runs three times more: on the
# runtime that is not the default (runc; crun is, as root), on containerd
# (with the default runtime under its shim), and on containerd with runc
# (docs/containerd.md, "Tests"). About a minute each on an idle machine.
# gVisor's tests stay on the runtime engine: containerd's runc shim cannot
# run runsc, which TestContainerdRefusesGvisorAsRoot asserts on every pass.
CONTAINERD_SKIP := Rootless$$|^TestGvisor

# The core of the launcher suite, which runs once more on each containerd
# release line below: caps, NoNewPrivs, seccomp, uid map, read-only root,
# canaries, mount and unshare, only lo (TestRunBoundary,
# TestCrunBoundaryAsRoot), exit codes, TTY, signals, SIGKILL of the
# launcher then gc.
CORE_SUITE := ^(TestRunBoundary|TestCrunBoundaryAsRoot|TestExitCodesPassThrough|TestTerminalIsAFreshPty|TestSigtermReachesTheAgent|TestKilledLauncherIsCleanedByGC)$$

# The whole root suite of cmd/agentbox once more under gVisor, on the runsc
# scripts/runsc-build.sh builds, each difference asserted (docs/gvisor.md).
# Left out: what names its own runtime or uses none (doctor's run root,
# podman's audit, --isolation user), the gVisor tests, which the first
# run has run, and the containerd tests: containerd's runc shim cannot run
# runsc, which TestContainerdRefusesGvisorAsRoot asserts in the first run.
# About 1.5 minutes on 2 cores (2026-12-01).
RUNSC_SKIP := Rootless$$|^TestDoctorRunRootAsRoot$$|^TestAuditPodman$$|^TestIsolationUser|^TestGvisor|^TestContainerd

# The containerd release lines built from source (tools/containerd/LINE,
# cached by version by scripts/containerd-build.sh), whose private daemons
# (scripts/containerd-up.sh LINE) the containerd tests and the core suite
# run against too, beside Debian's 1.6.20. About a minute each
# (docs/containerd.md, "Versions").
CONTAINERD_LINES := 1.7 2.x

integration: setup build ## unit and integration tests as root (real runc, kernel, Docker); *Rootless tests run in `make rootless`
	$(GO) test -tags integration -count=1 -timeout 25m -skip 'Rootless$$' ./...
	$(GO) test -count=1 $(EXT) ./cmd/agentbox
	$(GO) test -count=1 $(CTRD) ./cmd/agentbox

rootless: setup ## the launcher's integration suite as the unprivileged user agentbox-test
	scripts/test-rootless.sh

lint: $(LINT) ## go vet and golangci-lint (installed into bin/ on first use) for linux and darwin, a darwin/arm64 build of agentbox
	$(GO) vet ./...
	$(GO) vet $(EXT) ./cmd/agentbox
	$(GO) vet $(CTRD) ./cmd/agentbox
	GOOS=darwin $(GO) vet ./...
	GOOS=darwin $(GO) vet -tags integration ./...
	GOOS=darwin $(GO) vet $(EXT) ./cmd/agentbox
	GOOS=darwin $(GO) vet $(CTRD) ./cmd/agentbox
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/agentbox
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(EXT) -o /dev/null ./cmd/agentbox
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(CTRD) -o /dev/null ./cmd/agentbox
	$(LINT) run --max-issues-per-linter 0 --max-same-issues 0 ./...
	GOOS=darwin $(LINT) run --max-issues-per-linter 0 --max-same-issues 0 ./...

$(LINT):
	GOBIN=$(CURDIR)/$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(LINTVER)

generate: ## regenerate checked-in files (seccomp JSON, AppArmor profile, goldens stay manual)
	$(GO) generate ./...

verify-generate: ## fail when regenerating would change a checked-in file
	$(GO) generate ./...
	@git diff --exit-code -- seccomp/profiles seccomp/zsyscalls.go apparmor || { echo "generated files are stale: run 'make generate' and commit"; exit 1; }

bench: build ## benchmarks: agentbox run vs plain runc, seccomp compile, probe suite, gateway
	scripts/bench.sh

run: build ## build, install what is missing, and run a sandboxed shell (a scripted demo without a terminal)
	scripts/run.sh
