# `make demo` and `make test` set everything up on a fresh machine (Python 3.11 + the registries).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: venv demo test lint typecheck pytest clean schemas schemas-check \
	extension extension-deps extension-types extension-test extension-package record-fixture \
	extension-e2e reliability-full

# The VS Code extension (client-vscode/): npm ci once per package-lock.json, then build and test.
EXT := client-vscode
NPM := npm --prefix $(EXT) --loglevel=error --no-audit --no-fund --no-update-notifier
EXT_STAMP := $(EXT)/node_modules/.installed-$(shell cat $(EXT)/package-lock.json | cksum | cut -d' ' -f1)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

venv: $(STAMP)

demo: venv
	$(BIN)/python -m agentls.demo

lint: venv
	$(BIN)/ruff check server tests messages_api chat_completions_api bench scripts
	$(BIN)/ruff format --check server tests messages_api chat_completions_api bench scripts

typecheck: venv
	$(BIN)/mypy

# The Python tests in PYTEST_WORKERS processes (pytest-xdist): each test file's tests run in one
# worker, in their order, so a module's shared fixtures serve them as in one process.
# PYTEST_WORKERS=0 runs them all in this process.
PYTEST_WORKERS ?= 2
pytest: venv acpx-deps pyright-deps
	@bash scripts/ensure-system-deps.sh nvim bwrap
	$(BIN)/python -m pytest -q -ra -n $(PYTEST_WORKERS) --dist loadfile

# The fault and abuse suite (tests/reliability/) in its heavy mode: 50 kill -9 runs, 3,300 fuzzed
# protocol cases, 150 random fault schedules. Its quick mode runs in `make test`. The figures table
# prints at the end and is also written to reliability-report.json.
reliability-full: venv
	AGENTLS_RELIABILITY=full AGENTLS_RELIABILITY_REPORT=reliability-report.json \
		$(BIN)/python -m pytest -q -ra -p no:cacheprovider tests/reliability

schemas: venv
	$(BIN)/python -m agentls.protocol.schema

schemas-check: venv
	$(BIN)/python -m agentls.protocol.schema --check

$(EXT_STAMP): $(EXT)/package-lock.json $(EXT)/package.json
	cd $(EXT) && npm ci --loglevel=error --no-audit --no-fund
	@rm -f $(EXT)/node_modules/.installed-*
	@touch $@

extension-deps: $(EXT_STAMP)

# acpx, an independent ACP client (Node 18+), for tests/acp/test_acpx.py: npm ci once per lock.
ACPX := tests/acp/acpx
ACPX_STAMP := $(ACPX)/node_modules/.installed-$(shell cat $(ACPX)/package-lock.json | cksum | cut -d' ' -f1)

$(ACPX_STAMP): $(ACPX)/package-lock.json $(ACPX)/package.json
	cd $(ACPX) && npm ci --loglevel=error --no-audit --no-fund
	@rm -f $(ACPX)/node_modules/.installed-*
	@touch $@

.PHONY: acpx-deps
acpx-deps: $(ACPX_STAMP)

# pyright, a headless language server users configure, for tests/language/test_pyright.py: npm ci
# once per lock (one package, a few seconds).
PYRIGHT := tests/language/pyright
PYRIGHT_STAMP := $(PYRIGHT)/node_modules/.installed-$(shell cat $(PYRIGHT)/package-lock.json | cksum | cut -d' ' -f1)

$(PYRIGHT_STAMP): $(PYRIGHT)/package-lock.json $(PYRIGHT)/package.json
	cd $(PYRIGHT) && npm ci --loglevel=error --no-audit --no-fund
	@rm -f $(PYRIGHT)/node_modules/.installed-*
	@touch $@

.PHONY: pyright-deps
pyright-deps: $(PYRIGHT_STAMP)

# Regenerate src/protocol/generated.ts after schemas/ changed (the build fails while it is stale).
extension-types: extension-deps
	$(NPM) run --silent gen-types

extension: extension-deps
	$(NPM) run --silent build

extension-test: extension
	@bash scripts/ensure-system-deps.sh chromium
	$(NPM) run --silent test

# client-vscode/agentls.vsix
extension-package: extension-deps
	$(NPM) run --silent package

# The extension end to end in a real VS Code (code-server + headless Chromium, client-vscode/e2e/):
# installs the fresh .vsix into a fresh profile. scripts/ensure-code-server.sh installs code-server
# on first use and caches it in ~/.cache/agentls-e2e; screenshots land in client-vscode/test-artifacts/e2e/.
# By default it is the first run (a clean profile, no agentls on PATH: the server is installed from
# the .vsix's wheel through the extension's offer, pip reaching the package index) and every step
# then runs against that server; E2E_FIRST_RUN=0 runs them with the repository's .venv/bin/agentls
# (no package index needed).
E2E_FIRST_RUN ?= 1
extension-e2e: venv extension-package
	AGENTLS_E2E_FIRST_RUN=$(E2E_FIRST_RUN) $(NPM) run --silent e2e

# Re-record client-vscode/test/fixtures/demo-session.json from a real `agentls serve` run.
record-fixture: venv extension-deps
	$(NPM) run --silent record-fixture

test: lint typecheck schemas-check pytest extension-test extension-e2e

# Benchmarks (bench/): all of them, or some: `make bench BENCH=stream` (BENCH_RUNS=N for medians
# of N, default 5). Never part of `make test`. Figures print and land in bench/results/*.json.
BENCH ?=
BENCH_STAMP := $(VENV)/.bench-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	@rm -f $(VENV)/.bench-*
	@touch $@

.PHONY: bench bench-peers
bench: $(BENCH_STAMP)
	$(BIN)/python -m bench $(BENCH)

# agentls run beside Claude Code and opencode (installed from npm into a cache the first time).
bench-peers: $(BENCH_STAMP)
	PYTHON=$(BIN)/python bench/peers.sh --runs $(or $(BENCH_RUNS),5)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
	rm -rf $(EXT)/node_modules $(EXT)/dist $(EXT)/test-artifacts $(EXT)/agentls.vsix
