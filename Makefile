# ioh-lsp — see README.md. `make demo` runs the main job offline; `make test`
# runs every test. Targets that need a tool the machine lacks install it.

GO       ?= go
BIN      := bin/ioh-lsp
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
GOTEST_TIMEOUT ?= 40m

.PHONY: all build check staticcheck test test-go test-cross test-vscode test-vscode-ui test-neovim test-acp lint lint-fast bench demo vscode install deps-test clean schema

all: build

# build: the binary and, next to it, the sandbox's small init program
# (cmd/ioh-sandbox-init), which runs a contained run's stages instead of
# the whole binary. The init program is built first and ioh-lsp is linked
# with its SHA-256 (-X): ioh-lsp uses only an init program of its own
# build and re-executes itself otherwise (go install, a stale or foreign
# file). Both are built with the same flags (BUILDFLAGS, no cgo), so the
# same source gives the same bytes: a second `make build` relinks nothing
# (bench/rebuild.sh) and `make install` reuses build's cache.
INIT_BIN   := bin/ioh-sandbox-init
HASHVAR    := github.com/ioh-lsp/ioh-lsp/internal/sandbox.initProgramHash
BUILDFLAGS := -trimpath
# sha256 FILE: the file's SHA-256 in hex, in a recipe.
sha256 = $$( (sha256sum $(1) 2>/dev/null || shasum -a 256 $(1)) | cut -d' ' -f1)

# Both are built without cgo: static, a program starts without the
# dynamic loader, libc's and psx's pthread set-up (the init program: 1.0 ms
# CPU, 219 page faults here, against 1.6 ms and 284 linked against libc;
# `ioh-lsp version` 2.6x a hello-world program's start, 690 faults, against
# 3.1x and 745 with cgo, bench/startup.sh). Nothing in them needs libc: DNS
# and os/user use Go's own resolver and /etc/passwd (then $HOME), psx
# signals threads itself.
build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(INIT_BIN) ./cmd/ioh-sandbox-init
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -ldflags "$(LDFLAGS) -X $(HASHVAR)=$(call sha256,$(INIT_BIN))" -o $(BIN) ./cmd/ioh-lsp
	@chmod go-w $(dir $(BIN)) $(BIN) $(INIT_BIN)

# check: the everyday loop, a few minutes on 2 cores: vet, the generated
# files and formatting (lint-fast), staticcheck where it can be
# installed, and the tests with -short and without the race detector.
# -short leaves out the slowest tests, each skip saying why: the sandbox's
# containment suite re-run without user namespaces and as an ordinary
# user, the CPU cap under load, and the tests that build the binary or
# run many sandboxed builds. `make test` runs everything.
check: lint-fast staticcheck
	$(GO) test -short ./...

# test: everything. Go with -race, the cross-builds of the non-Linux sandbox
# backends, vet and formatting, and the editor clients.
test: deps-test test-go test-cross lint-fast test-vscode test-vscode-ui test-neovim test-acp

# test/mcp holds the real MCP server (npm) the Go tests of MCP tools run.
test-go: build
	@cd test/mcp && { [ -d node_modules/@modelcontextprotocol/server-everything ] || npm ci --no-audit --no-fund; }
	$(GO) test -race -timeout $(GOTEST_TIMEOUT) ./...

test-cross:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...
	for os in freebsd openbsd netbsd; do GOOS=$$os GOARCH=amd64 $(GO) vet ./internal/sandbox/... || exit 1; done
	GOOS=darwin GOARCH=arm64 $(GO) vet ./internal/sandbox/...
	GOOS=windows GOARCH=amd64 $(GO) vet ./internal/sandbox/...

# schema: regenerate schema/commands.schema.json, settings.schema.json, the
# VS Code extension's src/api.generated.ts and the Neovim plugin's
# lua/ioh/api.lua from their Go declarations (lsp/api, agent/config);
# lint-fast fails while a checked-in one differs.
schema:
	$(GO) run ./internal/schemagen

lint-fast:
	$(GO) vet ./...
	$(GO) run ./internal/schemagen -check
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

lint: lint-fast staticcheck

staticcheck:
	@export PATH="$$PATH:$$($(GO) env GOPATH)/bin"; \
	  if ! command -v staticcheck >/dev/null 2>&1 && ! $(GO) install honnef.co/go/tools/cmd/staticcheck@latest; then \
	    echo "staticcheck could not be installed from the module proxy; skipped"; exit 0; fi; \
	  staticcheck ./...

# The editor tests start the real server: it gets a configuration and a
# state directory of its own, never the user's ~/.config/ioh/config.yaml
# (the Go tests get theirs from internal/testenv).
TEST_WORLD = rm -rf $(CURDIR)/bin/test-world && mkdir -p $(CURDIR)/bin/test-world/config $(CURDIR)/bin/test-world/state && \
	XDG_CONFIG_HOME=$(CURDIR)/bin/test-world/config XDG_STATE_HOME=$(CURDIR)/bin/test-world/state

test-vscode:
	@if [ -f editors/vscode/package.json ]; then $(TEST_WORLD) $(MAKE) -C editors/vscode test; else echo "editors/vscode: nothing to test yet"; fi

# test-vscode-ui: the extension in a real VS Code (code-server and
# Debian's chromium; editors/vscode/uitest). Screenshots of each step go to
# editors/vscode/test-artifacts/.
test-vscode-ui: build
	$(MAKE) -C editors/vscode ui-test IOH_LSP=$(CURDIR)/$(BIN)

test-neovim: build
	@if [ -f editors/neovim/test/run.sh ]; then $(TEST_WORLD) IOH_LSP=$(CURDIR)/$(BIN) sh editors/neovim/test/run.sh; else echo "editors/neovim: nothing to test yet"; fi

# test-acp: `ioh-lsp acp` driven end to end by the official ACP TypeScript
# SDK (test/acp; each test makes its own HOME, XDG_* and IOH_STATE_DIR).
test-acp: build
	@cd test/acp && { [ -d node_modules/@agentclientprotocol/sdk ] || npm ci --no-audit --no-fund; } && \
	  IOH_LSP=$(CURDIR)/$(BIN) npm test --silent

# bench: every bench/*.sh, each printing ratios against a reference tool
# measured in the same run.
bench: build
	@for b in bench/*.sh; do [ -f "$$b" ] || continue; echo "== $$b"; IOH_LSP=$(CURDIR)/$(BIN) bash "$$b" || exit 1; done

demo: build
	./$(BIN) demo

vscode:
	$(MAKE) -C editors/vscode package

# install: both into $(go env GOBIN), else the first $(go env GOPATH)/bin,
# as build makes them.
install:
	CGO_ENABLED=0 $(GO) install $(BUILDFLAGS) ./cmd/ioh-sandbox-init
	dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir=$$($(GO) env GOPATH | cut -d: -f1)/bin; \
	  CGO_ENABLED=0 $(GO) install $(BUILDFLAGS) -ldflags "$(LDFLAGS) -X $(HASHVAR)=$(call sha256,$$dir/ioh-sandbox-init)" ./cmd/ioh-lsp

# deps-test installs the Debian packages the tests and benches use (as
# root; otherwise it names what is missing and the tests that need them skip).
deps-test:
	@command -v dpkg >/dev/null 2>&1 || exit 0; \
	  missing=""; for p in ripgrep bubblewrap neovim hyperfine fd-find git python3 python3-pytest procps util-linux chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config; do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -z "$$missing" ]; then exit 0; fi; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "deps-test: missing Debian packages:$$missing (install them as root; tests that need them skip)"; fi

clean:
	rm -rf bin
